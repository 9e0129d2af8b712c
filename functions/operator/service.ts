import { auditPut, commit, type Change } from '../../lib/audit/audit.js';
import type { CallContext } from '../../lib/auth/principal.js';
import { ADMIN_SCOPE } from '../../lib/auth/scopes.js';
import { eventPut } from '../../lib/events/outbox.js';
import { badRequest, notFound } from '../../lib/http/errors.js';
import { newId, nowIso } from '../../lib/ids.js';
import { tableName } from '../../lib/store/client.js';
import { keys } from '../../lib/store/keys.js';
import { DEFAULT_QUOTA, getTenant, listTenants as list, type Quota, type Tenant, type TenantStatus } from '../../lib/store/tenants.js';
import { transact, TxConditionFailed, type TxItem } from '../../lib/store/tx.js';
import { apiKeyItems, type NewApiKey } from '../../lib/account/api-keys.js';
import type { CreateTenantBody } from './schemas.js';

interface NewTenant {
  readonly tenant: Tenant;
  readonly api_key: NewApiKey;
}

/**
 * The items of a new account: the tenant, its admin user, its first admin API key and its
 * counters, all new. Used by the operator route and by the local runtime's seeding.
 */
function tenantItems(input: CreateTenantBody & { operator?: boolean; id?: string }, presetKey?: string): { items: TxItem[]; result: NewTenant } {
  const at = nowIso();
  const tenant: Tenant = {
    id: input.id ?? newId(),
    name: input.name,
    admin_email: input.admin_email,
    status: 'active',
    operator: input.operator ?? false,
    quota: { ...DEFAULT_QUOTA, ...input.quota },
    created_at: at,
    updated_at: at,
  };
  const tid = tenant.id;
  const key = apiKeyItems(tid, { name: 'initial admin key', scopes: [ADMIN_SCOPE], created_by: input.admin_email }, presetKey);
  const isNew = 'attribute_not_exists(pk)';
  const items: TxItem[] = [
    { Put: { TableName: tableName(), Item: { ...keys.tenant(tid), ...keys.tenantIndex(tid, at), ...tenant }, ConditionExpression: isNew } },
    {
      Put: {
        TableName: tableName(),
        Item: {
          ...keys.user(tid, input.admin_email),
          ...keys.userIndex(tid, input.admin_email),
          email: input.admin_email,
          role: 'admin',
          created_at: at,
        },
        ConditionExpression: isNew,
      },
    },
    ...key.items,
    { Put: { TableName: tableName(), Item: { ...keys.counters(tid), secrets: 0, api_keys: 1 }, ConditionExpression: isNew } },
  ];
  return { items, result: { tenant, api_key: key.key } };
}

const createdChange = (t: Tenant): Change => ({
  action: 'tenant.create',
  resource: { type: 'tenant', id: t.id, name: t.name },
  event: { type: 'tenant.created', data: { id: t.id, name: t.name } },
});

export async function createTenant(ctx: CallContext, body: CreateTenantBody): Promise<NewTenant> {
  const { items, result } = tenantItems(body);
  await commit(ctx, result.tenant.id, items, createdChange(result.tenant));
  return result;
}

/**
 * Seeds the platform-operator account of the local runtime with a known admin key.
 * Idempotent: a second start with the same key finds the account and writes nothing.
 */
export async function seedOperatorTenant(input: { id: string; name: string; admin_email: string }, presetKey: string): Promise<boolean> {
  if (await getTenant(input.id)) return false;
  const { items, result } = tenantItems({ ...input, operator: true }, presetKey);
  const system: CallContext = {
    principal: { kind: 'api_key', tenantId: input.id, tenant: result.tenant, id: 'local-runtime', user: null, scopes: [], operator: true },
    requestId: 'seed',
    sourceIp: null,
    userAgent: 'local-runtime',
  };
  const change = createdChange(result.tenant);
  await transact([...items, auditPut(system, input.id, change).item, eventPut(input.id, 'tenant.created', change.event!.data)]);
  return true;
}

export const listTenants = list;

async function updateTenant(ctx: CallContext, id: string, set: Record<string, unknown>, change: (t: Tenant) => Change): Promise<Tenant> {
  const before = await getTenant(id);
  if (!before) throw notFound('tenant');
  const after = { ...before, ...set, updated_at: nowIso() } as Tenant;
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const parts = Object.entries({ ...set, updated_at: after.updated_at }).map(([k, v]) => {
    names[`#${k}`] = k;
    values[`:${k}`] = v;
    return `#${k} = :${k}`;
  });
  try {
    await commit(
      ctx,
      id,
      [
        {
          Update: {
            TableName: tableName(),
            Key: keys.tenant(id),
            UpdateExpression: `SET ${parts.join(', ')}`,
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
          },
        },
      ],
      change(after),
    );
  } catch (error) {
    if (error instanceof TxConditionFailed && error.index === 0) throw notFound('tenant');
    throw error;
  }
  return after;
}

export async function setTenantStatus(ctx: CallContext, id: string, status: TenantStatus): Promise<Tenant> {
  if (status === 'suspended' && id === ctx.principal.tenantId) {
    throw badRequest('an operator cannot suspend its own account', undefined, 'self_suspension');
  }
  return updateTenant(ctx, id, { status }, (t) => ({
    action: status === 'active' ? 'tenant.activate' : 'tenant.suspend',
    resource: { type: 'tenant', id: t.id, name: t.name },
    event: { type: status === 'active' ? 'tenant.activated' : 'tenant.suspended', data: { id: t.id, status } },
  }));
}

export async function setTenantQuota(ctx: CallContext, id: string, quota: Quota): Promise<Tenant> {
  const before = await getTenant(id);
  if (!before) throw notFound('tenant');
  return updateTenant(ctx, id, { quota: { ...before.quota, ...quota } }, (t) => ({
    action: 'tenant.quota',
    resource: { type: 'tenant', id: t.id, name: t.name },
    detail: { quota: t.quota },
    event: { type: 'tenant.quota_changed', data: { id: t.id, quota: t.quota } },
  }));
}

import { commit, type Change } from '../../lib/audit/audit.js';
import type { CallContext } from '../../lib/auth/principal.js';
import { badRequest, notFound } from '../../lib/http/errors.js';
import { nowIso } from '../../lib/ids.js';
import { tableName } from '../../lib/store/client.js';
import { keys } from '../../lib/store/keys.js';
import { getTenant, listTenants as list, type Quota, type Tenant, type TenantStatus } from '../../lib/store/tenants.js';
import { TxConditionFailed } from '../../lib/store/tx.js';
import { type NewTenant, tenantCreatedChange, tenantItems } from '../../lib/operator/accounts.js';
import type { CreateTenantBody } from './schemas.js';

export async function createTenant(ctx: CallContext, body: CreateTenantBody): Promise<NewTenant> {
  const { items, result } = tenantItems(body);
  await commit(ctx, result.tenant.id, items, tenantCreatedChange(result.tenant));
  return result;
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

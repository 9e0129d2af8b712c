import { apiKeyItems, type NewApiKey } from '../account/api-keys.js';
import { auditPut, type Change } from '../audit/audit.js';
import type { CallContext } from '../auth/principal.js';
import { ADMIN_SCOPE } from '../auth/scopes.js';
import { eventPut } from '../outbox/outbox.js';
import { newId, nowIso } from '../ids.js';
import { tableName } from '../store/client.js';
import { keys } from '../store/keys.js';
import { DEFAULT_QUOTA, listTenants, type Quota, type Tenant } from '../store/tenants.js';
import { transact, TxConditionFailed, type TxItem } from '../store/tx.js';
import { readOperatorMark } from './store.js';

/**
 * Accounts created outside a request: by the operator route (functions/operator), and the
 * platform-operator accounts that nothing can create through the API because creating one
 * needs an operator. Two callers make those: `npm run operator:create` (the first operator
 * of a deployment in AWS, scripts/operator/create.ts) and the local runtime's seeding
 * (scripts/local/seed.ts). Both go through createOperatorAccount, so both write the same
 * items, the same audit entry and the operator mark below.
 */

export interface NewTenant {
  readonly tenant: Tenant;
  readonly api_key: NewApiKey;
}

interface AccountInput {
  readonly name: string;
  readonly admin_email: string;
  readonly quota?: Quota;
  /** A fixed account id (the local runtime's operator); default: a new UUIDv7. */
  readonly id?: string;
  readonly operator?: boolean;
}

/**
 * The items of a new account: the tenant, its admin user, its first admin API key (only
 * the key's hash is written: lib/account/api-keys.ts) and its counters, all new.
 */
export function tenantItems(input: AccountInput, presetKey?: string): { items: TxItem[]; result: NewTenant } {
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

export const tenantCreatedChange = (t: Tenant): Change => ({
  action: 'tenant.create',
  resource: { type: 'tenant', id: t.id, name: t.name },
  event: { type: 'tenant.created', data: { id: t.id, name: t.name } },
});

/** Refusal to create a platform operator because one exists (`force` creates another). */
export class OperatorExists extends Error {
  constructor(readonly tenantIds: readonly string[]) {
    super(
      tenantIds.length > 0
        ? `a platform operator already exists (account ${tenantIds.join(', ')})`
        : 'a platform operator was created concurrently by another run',
    );
  }
}

/**
 * The platform-operator accounts of the table: those the operator mark names, or, in a
 * table written before the mark existed, every operator account of the TENANTS index.
 */
async function existingOperators(): Promise<string[]> {
  const mark = { Item: await readOperatorMark() };
  if (mark.Item) return (mark.Item.tenant_ids as string[] | undefined) ?? [];
  const found: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await listTenants(100, cursor);
    found.push(...page.tenants.filter((t) => t.operator).map((t) => t.id));
    cursor = page.cursor;
  } while (cursor);
  return found;
}

interface OperatorOptions {
  /** Create another operator even when one exists. */
  readonly force?: boolean;
  /** A known key (the local runtime's SECRETS_DEV_ROOT_KEY); default: a random one. */
  readonly presetKey?: string;
  /** Who creates it, for the audit entry (`operator:create`, `local-runtime`). */
  readonly actor: string;
}

/**
 * The items of a new operator account plus its audit entry, its outbox event and the
 * operator mark, the last item. Without `force` the mark is a conditional put (it must not
 * exist), so of two runs that both found no operator only one commits; with `force` the
 * mark is updated unconditionally and lists every account made this way.
 */
export function operatorAccountItems(input: Omit<AccountInput, 'operator'>, options: OperatorOptions): { items: TxItem[]; result: NewTenant } {
  const { items, result } = tenantItems({ ...input, operator: true }, options.presetKey);
  const tid = result.tenant.id;
  const at = result.tenant.created_at;
  const system: CallContext = {
    principal: { kind: 'api_key', tenantId: tid, tenant: result.tenant, id: options.actor, user: null, scopes: [], operator: true },
    requestId: newId(),
    sourceIp: null,
    userAgent: options.actor,
  };
  const change = tenantCreatedChange(result.tenant);
  const mark: TxItem = options.force
    ? {
        Update: {
          TableName: tableName(),
          Key: keys.operatorMark(),
          UpdateExpression:
            'SET tenant_ids = list_append(if_not_exists(tenant_ids, :none), :ids), created_at = if_not_exists(created_at, :at), updated_at = :at',
          ExpressionAttributeValues: { ':none': [], ':ids': [tid], ':at': at },
        },
      }
    : {
        Put: {
          TableName: tableName(),
          Item: { ...keys.operatorMark(), tenant_ids: [tid], created_at: at, updated_at: at },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      };
  return { items: [...items, auditPut(system, tid, change).item, eventPut(tid, 'tenant.created', change.event!.data), mark], result };
}

/** Writes what operatorAccountItems prepared; a lost race on the mark is OperatorExists. */
export async function commitOperatorAccount(prepared: { items: TxItem[]; result: NewTenant }): Promise<NewTenant> {
  try {
    await transact(prepared.items);
  } catch (error) {
    if (error instanceof TxConditionFailed && (error.conflict || error.index === prepared.items.length - 1)) {
      const now = await existingOperators();
      if (!error.conflict || now.length > 0) throw new OperatorExists(now);
    }
    throw error;
  }
  return prepared.result;
}

/**
 * Creates a platform-operator account with one admin API key and returns the key (shown
 * once by the caller; the table holds only its SHA-256). Refuses with OperatorExists when
 * one exists, unless `force`.
 */
export async function createOperatorAccount(input: Omit<AccountInput, 'operator'>, options: OperatorOptions): Promise<NewTenant> {
  if (!options.force) {
    const found = await existingOperators();
    if (found.length > 0) throw new OperatorExists(found);
  }
  return commitOperatorAccount(operatorAccountItems(input, options));
}

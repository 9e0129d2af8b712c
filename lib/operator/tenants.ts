import { commit, type Change } from '../audit/audit.js';
import type { CallContext } from '../auth/principal.js';
import { badRequest, notFound } from '../core/errors.js';
import { nowIso } from '../ids.js';
import { tableName } from '../store/client.js';
import { keys } from '../store/keys.js';
import { getTenant, type Quota, type Tenant, type TenantStatus } from '../store/tenants.js';
import { TxConditionFailed, type TxItem } from '../store/tx.js';

/**
 * Changes of an account's state: its status (activate, suspend) and its quota. The operator
 * routes (PUT /api/v1/admin/tenants/{id}/quota, PATCH .../activate|suspend) and billing (a
 * plan change, lib/billing/subscriptions.ts) go through these same functions.
 */

/** What a caller commits together with a quota change: a status, its own conditional items, audit detail. */
interface QuotaChangeExtras {
  readonly status?: TenantStatus;
  /** Items committed in the same transaction after the tenant update (their conditions fail it as TxConditionFailed, index >= 1). */
  readonly items?: readonly TxItem[];
  readonly detail?: Record<string, unknown>;
}

async function updateTenant(
  ctx: CallContext,
  id: string,
  set: Record<string, unknown>,
  change: (t: Tenant) => Change,
  extra: readonly TxItem[] = [],
): Promise<Tenant> {
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
        ...extra,
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

/** Merges `quota` into the account's quota (one audit entry `tenant.quota`, event `tenant.quota_changed`). */
export async function setTenantQuota(ctx: CallContext, id: string, quota: Quota, extras: QuotaChangeExtras = {}): Promise<Tenant> {
  const before = await getTenant(id);
  if (!before) throw notFound('tenant');
  const set = { quota: { ...before.quota, ...quota }, ...(extras.status ? { status: extras.status } : {}) };
  return updateTenant(
    ctx,
    id,
    set,
    (t) => ({
      action: 'tenant.quota',
      resource: { type: 'tenant', id: t.id, name: t.name },
      detail: { quota: t.quota, ...(extras.status ? { status: t.status } : {}), ...extras.detail },
      event: { type: 'tenant.quota_changed', data: { id: t.id, quota: t.quota } },
    }),
    extras.items,
  );
}

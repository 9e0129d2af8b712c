import { systemContext } from '../auth/principal.js';
import { logger } from '../core/logger.js';
import { newId } from '../ids.js';
import { mergeShards } from '../store/shards.js';
import { keys } from '../store/keys.js';
import { getTenant, type Tenant } from '../store/tenants.js';
import { HttpError } from '../core/errors.js';
import { requestListing } from '../events/platform-listings.js';
import { withTenant } from '../tenancy/scope.js';
import { cleanUpAbandoned, getLease, revokeLease } from './leases.js';

/**
 * The lease-expiry sweeper: revokes every lease past its `expires_at` (an EventBridge
 * schedule in AWS: functions/database/sweeper.sweep; a timer in the local runtime:
 * scripts/local/sweeper.ts). PostgreSQL logins also carry VALID UNTIL, so an expired lease
 * cannot log in even before the sweep; MySQL/MariaDB have no such per-login expiry, so
 * there the sweeper is what ends access.
 *
 * It reads the platform listing `LEASES` (index plat, keys only, `<expires_at>#<tid>#<id>`,
 * written by the stream relay alone: lib/events/platform-listings.ts)
 * below `now`, re-reads each lease (the index is eventually consistent) and revokes active
 * ones exactly as DELETE /database/leases/{id} does (audited, actor `system` /
 * `lease-sweeper`; a lease whose issuance crashed before its login existed is revoked with
 * `login_existed: false`), or cleans up `failed` ones (an issuance that could not drop its
 * login at once) and `pending` ones an earlier release left. One lease's failure (server
 * down) is logged and retried at the next run; the others go on.
 */
export interface SweepReport {
  readonly examined: number;
  readonly revoked: number;
  readonly cleaned: number;
  readonly failed: ReadonlyArray<{ readonly tenant_id: string; readonly lease_id: string; readonly reason: string }>;
}

/**
 * One pass. `now` (default: the clock) and `tenantIds` (only these accounts' leases) let a
 * test or an operator sweep deliberately; the schedule passes neither. No revocation starts
 * after `stopAt` (epoch ms); what is left is due at the next run.
 */
export async function sweepExpiredLeases(
  opts: { now?: Date; limit?: number; tenantIds?: readonly string[]; stopAt?: number } = {},
): Promise<SweepReport> {
  const now = (opts.now ?? new Date()).toISOString();
  const limit = opts.limit ?? 500;
  const due: Array<{ tenantId: string; id: string }> = [];
  // the LEASES listing's shards (keys.leaseExpiryPks), merged in expiry order
  for await (const item of mergeShards(keys.leaseExpiryPks, { sk: { before: now } }, { pageSize: Math.min(100, limit) })) {
    if (due.length >= limit) break;
    const lease = keys.parseLease(String(item.pk), String(item.sk));
    if (!lease || (opts.tenantIds && !opts.tenantIds.includes(lease.tenantId))) continue;
    due.push(lease);
  }

  let revoked = 0;
  let cleaned = 0;
  const failed: Array<{ tenant_id: string; lease_id: string; reason: string }> = [];
  const tenants = new Map<string, Tenant | undefined>();
  for (const { tenantId, id } of due) {
    // stop starting revocations near the invocation's deadline: the rest wait for the next run
    if (opts.stopAt !== undefined && Date.now() >= opts.stopAt) break;
    try {
      // everything in the lease's account runs in its tenant session (infra/background.ts
      // LeaseSweeper, tenantAccess 'grants'): the listing read above is the worker's own
      const outcome = await withTenant(tenantId, async (): Promise<'revoked' | 'cleaned' | 'stuck' | undefined> => {
        const lease = await getLease(tenantId, id);
        if (!lease) return undefined;
        if (lease.status === 'active') {
          if (!tenants.has(tenantId)) tenants.set(tenantId, await getTenant(tenantId));
          const out = await revokeLease(
            systemContext(tenants.get(tenantId) ?? ({ id: tenantId } as Tenant), 'lease-sweeper', {
              requestId: `lease-sweep-${newId()}`,
              sourceIp: null,
              userAgent: 'lease-sweeper',
            }),
            id,
            { by: 'sweeper' },
          );
          return out.already_revoked ? undefined : 'revoked';
        }
        if (lease.status === 'pending' || lease.status === 'failed') return (await cleanUpAbandoned(lease)) ? 'cleaned' : 'stuck';
        // a stale entry (the relay's unlisting not arrived yet, or one the migration copied
        // just before a revocation): the lease's own state decides, through the relay
        // (lib/events/platform-listings.ts requestListing; a tenant session never names platpk)
        await requestListing(keys.lease(tenantId, id), lease.status);
        return undefined;
      });
      if (outcome === 'revoked') revoked++;
      else if (outcome === 'cleaned') cleaned++;
      else if (outcome === 'stuck') failed.push({ tenant_id: tenantId, lease_id: id, reason: 'the login could not be removed' });
    } catch (error) {
      const reason = error instanceof HttpError ? error.message : 'internal error';
      failed.push({ tenant_id: tenantId, lease_id: id, reason });
      logger.warn('lease sweep: revocation failed', {
        tenant_id: tenantId,
        lease_id: id,
        reason,
        ...(error instanceof HttpError ? {} : { error: error as Error }),
      });
    }
  }
  if (due.length > 0) logger.info('lease sweep', { examined: due.length, revoked, cleaned, failed: failed.length });
  return { examined: due.length, revoked, cleaned, failed };
}

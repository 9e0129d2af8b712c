import type { CallContext } from '../auth/principal.js';
import { commit } from '../audit/audit.js';
import { issueLease, revokeLease } from '../database/leases.js';
import { notFound } from '../core/errors.js';
import { logger } from '../core/logger.js';
import { accessChange } from './access.js';
import { DATABASE_ROLE_KIND, readGrantedHead } from './grants.js';
import type { StoredGrant } from './store.js';

/**
 * `database.issue`: a lease from the granted database role, issued by the leases engine with
 * the device's own context (its audit entry `database.lease_issue` names the device), then
 * the agents' `agent.access` entry with the alias. Should that second entry fail, the lease
 * is revoked again, so no credential leaves without the device's access on record.
 */
export async function issueGrantedLease(ctx: CallContext, grant: StoredGrant, ttlSeconds: number | undefined) {
  const tid = ctx.principal.tenantId;
  const head = await readGrantedHead(tid, grant);
  const meta = (head?.meta ?? {}) as Record<string, unknown>;
  if (!head || meta.kind !== DATABASE_ROLE_KIND) throw notFound('granted resource');
  const resource = { type: grant.resource_type, id: grant.resource, name: String(head.name ?? '') };
  const lease = await issueLease(ctx, grant.resource, ttlSeconds === undefined ? {} : { ttlSeconds });
  let auditId: string;
  try {
    auditId = await commit(ctx, tid, [], accessChange(ctx, grant, resource, { lease_id: lease.lease_id, expires_at: lease.expires_at }));
  } catch (error) {
    await revokeLease(ctx, lease.lease_id).catch((e: unknown) =>
      logger.warn('could not revoke an unrecorded agent lease', { lease_id: lease.lease_id, error: e as Error }),
    );
    throw error;
  }
  return { alias: grant.alias, service: grant.service, resource, lease, audit_id: auditId };
}

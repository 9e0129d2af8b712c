import { z } from 'zod';
import { deviceSession } from '../auth/device-signature.js';
import type { CallContext } from '../auth/principal.js';
import { commit, recordAudit } from '../audit/audit.js';
import { issueLease, revokeLease } from '../database/leases.js';
import { notFound } from '../http/errors.js';
import { logger } from '../http/logger.js';
import { accessChange } from './access.js';
import { readGrantedHead, DATABASE_ROLE_KIND } from './grants.js';
import type { StoredGrant } from './store.js';
import { resolveVariables, VariableResolutionError, MAX_NAMES, MAX_TEMPLATE_BYTES } from '../variables/resolve.js';

/**
 * The device side of two other capabilities: database leases (`database.issue` grants,
 * lib/database/leases.ts) and variable resolution (lib/variables/resolve.ts).
 */

/** The same request as POST /api/v1/variables/resolve: `names` or a `template` (checked by the resolver). */
export const VariablesBody = z.strictObject({
  names: z.array(z.string().min(1).max(128)).max(MAX_NAMES).optional(),
  template: z.string().min(1).max(MAX_TEMPLATE_BYTES).optional(),
});
export type VariablesBody = z.infer<typeof VariablesBody>;

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
    await revokeLease(ctx, lease.lease_id).catch((e: unknown) => logger.warn('could not revoke an unrecorded agent lease', { lease_id: lease.lease_id, error: e as Error }));
    throw error;
  }
  return { alias: grant.alias, service: grant.service, resource, lease, audit_id: auditId };
}

/**
 * Variables whose underlying credentials are all granted to the device: a variable's
 * credential must be the resource of one of the profile's `secret.read` grants. All or
 * nothing, as for API callers (a denied variable → 403 naming it, audited as denied).
 */
export async function resolveGrantedVariables(ctx: CallContext, body: VariablesBody) {
  const tid = ctx.principal.tenantId;
  const { device, profile } = deviceSession(ctx.principal);
  const granted = new Set(profile.grants.filter((g) => g.service === 'secret.read').map((g) => g.resource));
  const resource = { type: 'agent_device', id: device.device_id, name: device.name };
  let resolution: Awaited<ReturnType<typeof resolveVariables>>;
  try {
    resolution = await resolveVariables(ctx, body, (credential) => granted.has(credential.id));
  } catch (error) {
    if (error instanceof VariableResolutionError && error.status === 403) {
      await recordAudit(ctx, tid, {
        action: 'agent.variables.resolve',
        resource,
        outcome: 'denied',
        detail: { failures: error.failures.map((f) => ({ name: f.name, reason: f.reason })), profile_id: profile.id },
      });
    }
    throw error;
  }
  const credentials = resolution.credentials.map((c) => ({ type: c.type, id: c.id }));
  const auditId = await commit(ctx, tid, [], {
    action: 'agent.variables.resolve',
    resource,
    detail: { names: resolution.names, credentials },
    event: { type: 'agent.variables_resolved', data: { id: device.device_id, name: device.name, names: resolution.names, credential_ids: credentials.map((c) => c.id) } },
  });
  return {
    names: resolution.names,
    values: resolution.values,
    ...(resolution.result !== undefined ? { result: resolution.result } : {}),
    audit_id: auditId,
  };
}

import * as z from 'zod/v4';
import { deviceSession } from './device-signature.js';
import type { CallContext } from '../auth/principal.js';
import { commit, recordAudit } from '../audit/audit.js';
import { resolveVariables, VariableResolutionError, MAX_NAMES, MAX_TEMPLATE_BYTES } from '../variables/resolve.js';

/** The device side of variable resolution (lib/variables/resolve.ts); leases are lib/agents/lease.ts. */

/** The same request as POST /api/v1/variables/resolve: `names` or a `template` (checked by the resolver). */
export const VariablesBody = z.strictObject({
  names: z.array(z.string().min(1).max(128)).max(MAX_NAMES).optional(),
  template: z.string().min(1).max(MAX_TEMPLATE_BYTES).optional(),
});
export type VariablesBody = z.infer<typeof VariablesBody>;

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
    event: {
      type: 'agent.variables_resolved',
      data: { id: device.device_id, name: device.name, names: resolution.names, credential_ids: credentials.map((c) => c.id) },
    },
  });
  return {
    names: resolution.names,
    values: resolution.values,
    ...(resolution.result !== undefined ? { result: resolution.result } : {}),
    audit_id: auditId,
  };
}

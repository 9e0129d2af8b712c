import type { CallContext } from '../auth/principal.js';
import { deviceSession, signatureError } from './device-signature.js';
import { commit, recordAudit } from '../audit/audit.js';
import { forbidden, notFound } from '../core/errors.js';
import { openSecret } from '../resources/store.js';
import { TxConditionFailed } from '../store/tx.js';
import { grantedHead, hintsCurrent } from './grants.js';
import { grantHintsUpdate, type StoredGrant } from './store.js';

/**
 * What a signed device request may do: read its own identity, and perform the service of
 * one of its profile's grants on exactly the granted resource. Every action is audited with
 * the device as the actor and emits an `agent.*` event; a request for an alias the profile
 * does not grant is refused with 403 `not_granted` (the device is authenticated; the alias
 * is simply not its to use) and audited as denied.
 */

export function identity(ctx: CallContext) {
  const { device, profile } = deviceSession(ctx.principal);
  return {
    device_id: device.device_id,
    name: device.name,
    tenant_id: device.tenant_id,
    algorithm: device.algorithm,
    profile: { id: profile.id, name: profile.name, enabled: profile.enabled },
    grants: profile.grants.map((g) => ({ alias: g.alias, service: g.service, resource_type: g.resource_type })),
  };
}

export async function readIdentity(ctx: CallContext) {
  const view = identity(ctx);
  await commit(ctx, ctx.principal.tenantId, [], {
    action: 'agent.identity',
    resource: { type: 'agent_device', id: view.device_id, name: view.name },
    event: { type: 'agent.identity_read', data: { id: view.device_id, name: view.name, profile_id: view.profile.id } },
  });
  return view;
}

/** The grant for an alias, or 403 (audited as denied). */
export async function grantFor(ctx: CallContext, alias: string, action: string): Promise<StoredGrant> {
  const { device, profile } = deviceSession(ctx.principal);
  const grant = profile.grants.find((g) => g.alias === alias);
  if (grant) return grant;
  await recordAudit(ctx, ctx.principal.tenantId, {
    action,
    resource: { type: 'agent_device', id: device.device_id, name: device.name },
    detail: { alias, reason: 'not_granted', profile_id: profile.id },
    outcome: 'denied',
  });
  throw forbidden(`alias "${alias}" is not granted to this device's profile`, 'not_granted');
}

/** The audit change of a device action on a granted resource. */
export function accessChange(
  ctx: CallContext,
  grant: StoredGrant,
  resource: { type: string; id: string; name: string },
  detail: Record<string, unknown> = {},
) {
  const { device } = deviceSession(ctx.principal);
  return {
    action: 'agent.access',
    resource,
    detail: { alias: grant.alias, service: grant.service, device_id: device.device_id, ...detail },
    event: {
      type: 'agent.accessed' as const,
      data: {
        id: device.device_id,
        name: device.name,
        alias: grant.alias,
        service: grant.service,
        resource_type: resource.type,
        resource_id: resource.id,
        ...detail,
      },
    },
  };
}

/**
 * `secret.read`: the granted resource's value, after the audit entry has committed. The
 * head was usually read during authentication (the device's grant hints); when the hints
 * differ from the profile, the audit transaction rewrites them.
 */
export async function readGrantedSecret(ctx: CallContext, grant: StoredGrant) {
  const tid = ctx.principal.tenantId;
  const { device, profile, prefetch } = deviceSession(ctx.principal);
  const head = await grantedHead(tid, grant, prefetch);
  if (!head) throw notFound('granted resource');
  const version = head.version as number;
  const resource = { type: grant.resource_type, id: grant.resource, name: String(head.name ?? '') };
  const data = await openSecret<unknown>(tid, { type: grant.resource_type, id: grant.resource, version }, head.value as Uint8Array | undefined);
  const metadata = head.meta ?? {};
  const refresh = hintsCurrent(device.grant_hints, profile.grants) ? [] : [grantHintsUpdate(tid, device.device_id, profile.grants)];
  let auditId: string;
  try {
    auditId = await commit(ctx, tid, refresh, accessChange(ctx, grant, resource, { version }));
  } catch (error) {
    // the hints' condition: the device's auth item is gone (revoked during this request)
    if (error instanceof TxConditionFailed && refresh.length > 0 && error.index === 0)
      throw signatureError('unknown or revoked device key', 'unauthorized');
    throw error;
  }
  return { alias: grant.alias, service: grant.service, resource: { ...resource, version }, data: data ?? null, metadata, audit_id: auditId };
}

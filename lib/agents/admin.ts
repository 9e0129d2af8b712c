import type { CallContext } from '../auth/principal.js';
import { commit } from '../audit/audit.js';
import { conflict, forbidden, notFound, validationFailed, type FieldIssue } from '../core/errors.js';
import { newId, nowIso } from '../ids.js';
import { actorName } from '../resources/store.js';
import { TxConditionFailed } from '../store/tx.js';
import { counterAdd } from '../store/usage.js';
import { candidateTypes, findResource, mismatch } from './grants.js';
import { displayFingerprint, parseDevicePublicKey, PublicKeyError, type DevicePublicKey } from '../crypto/device-public-key.js';
import {
  devicePuts,
  deviceRevokeItems,
  getDevice,
  getProfile,
  listDevices as listDeviceRecords,
  listProfiles as listProfileRecords,
  profileExists,
  profilePut,
  type DeviceRecord,
  type EnrolledVia,
  type GrantService,
  type ProfileRecord,
  type StoredGrant,
} from './store.js';

/**
 * Account-side management of agents: profiles with exact-resource grants, devices
 * enrolled with account credentials, listing and revocation.
 */

interface GrantInput {
  readonly alias: string;
  readonly service: GrantService;
  readonly resource: string;
}

interface ProfileInput {
  readonly name: string;
  readonly enabled: boolean;
  readonly grants: readonly GrantInput[];
}

/** A profile as shown: grants without internal fields. */
export const profileView = (p: ProfileRecord) => ({
  id: p.id,
  name: p.name,
  enabled: p.enabled,
  grants: p.grants.map((g) => ({ alias: g.alias, service: g.service, resource: g.resource, resource_type: g.resource_type })),
  version: p.version,
  created_at: p.created_at,
  updated_at: p.updated_at,
  created_by: p.created_by,
  updated_by: p.updated_by,
});

export const deviceView = (d: DeviceRecord) => ({ ...d, fingerprint: displayFingerprint(d.fingerprint) });

/** Resolves every grant to an existing resource of a matching type in the caller's account; 400 otherwise. */
async function resolveGrants(tenantId: string, grants: readonly GrantInput[]): Promise<StoredGrant[]> {
  const details: FieldIssue[] = [];
  const resolved = await Promise.all(
    grants.map(async (g, i) => {
      const res = await findResource(tenantId, g.resource, candidateTypes(g.service));
      const path = `body.grants.${i}.resource`;
      if (!res) {
        details.push({ path, message: 'no resource with this id in the account' });
        return undefined;
      }
      const why = mismatch(g.service, res);
      if (why) {
        details.push({ path, message: why });
        return undefined;
      }
      const grant: StoredGrant = {
        alias: g.alias,
        service: g.service,
        resource: g.resource,
        resource_type: res.type,
        ...(res.type === 'secret' ? { resource_name: res.name } : {}),
      };
      return grant;
    }),
  );
  if (details.length > 0) throw validationFailed(details.sort((a, b) => a.path.localeCompare(b.path)));
  return resolved as StoredGrant[];
}

/** Creates or replaces the profile `id` (a UUID chosen by the client). */
export async function putProfile(ctx: CallContext, id: string, input: ProfileInput): Promise<{ profile: ProfileRecord; created: boolean }> {
  const tid = ctx.principal.tenantId;
  const grants = await resolveGrants(tid, input.grants);
  const existing = await getProfile(tid, id);
  const at = nowIso();
  const rec: ProfileRecord = {
    id,
    name: input.name,
    enabled: input.enabled,
    grants,
    version: (existing?.version ?? 0) + 1,
    created_at: existing?.created_at ?? at,
    updated_at: at,
    created_by: existing?.created_by ?? actorName(ctx),
    updated_by: actorName(ctx),
  };
  try {
    await commit(ctx, tid, [profilePut(tid, rec, existing?.version ?? null)], {
      action: existing ? 'agent.profile.update' : 'agent.profile.create',
      resource: { type: 'agent_profile', id, name: rec.name },
      detail: {
        enabled: rec.enabled,
        version: rec.version,
        grants: grants.map((g) => ({ alias: g.alias, service: g.service, resource: g.resource })),
      },
      event: { type: 'agent.profile_updated', data: { id, name: rec.name, enabled: rec.enabled, version: rec.version, created: !existing } },
    });
  } catch (error) {
    if (error instanceof TxConditionFailed) throw conflict('the profile was changed concurrently; read it again before retrying', 'stale_etag');
    throw error;
  }
  return { profile: rec, created: !existing };
}

export const listProfiles = (ctx: CallContext, page: { limit: number; offset: number; cursor?: string }) =>
  listProfileRecords(ctx.principal.tenantId, page);

/** Parses a public key from a request body field; 400 with the field's path otherwise. */
export async function publicKeyField(input: unknown, path = 'body.public_key'): Promise<DevicePublicKey> {
  try {
    return await parseDevicePublicKey(input);
  } catch (error) {
    if (error instanceof PublicKeyError) throw validationFailed([{ path, message: error.message }]);
    throw error;
  }
}

/**
 * Enrols a device in the caller's account: tenant item, global auth item, the profile
 * check and the quota counter in one transaction with the audit entry and event.
 */
export async function enrolDevice(
  ctx: CallContext,
  input: { name: string; key: DevicePublicKey; profile_id: string; via: EnrolledVia; id?: string; created_by?: string | null },
  extraItems: Parameters<typeof commit>[2] = [],
): Promise<DeviceRecord> {
  const p = ctx.principal;
  const tid = p.tenantId;
  const rec: DeviceRecord = {
    id: input.id ?? newId(),
    name: input.name,
    profile_id: input.profile_id,
    algorithm: input.key.algorithm,
    public_key: input.key.jwk,
    fingerprint: input.key.fingerprint,
    status: 'active',
    enrolled_via: input.via,
    created_at: nowIso(),
    created_by: input.created_by === undefined ? actorName(ctx) : input.created_by,
    revoked_at: null,
    revoked_by: null,
  };
  const items = [
    ...devicePuts(tid, rec),
    profileExists(tid, rec.profile_id),
    counterAdd(tid, 'devices', 1, p.tenant.quota.max_devices),
    ...extraItems,
  ];
  try {
    await commit(ctx, tid, items, {
      action: 'agent.device.enroll',
      resource: { type: 'agent_device', id: rec.id, name: rec.name },
      detail: {
        profile_id: rec.profile_id,
        enrolled_via: rec.enrolled_via,
        algorithm: rec.algorithm,
        fingerprint: displayFingerprint(rec.fingerprint),
      },
      event: { type: 'agent.enrolled', data: { id: rec.id, name: rec.name, profile_id: rec.profile_id, enrolled_via: rec.enrolled_via } },
    });
  } catch (error) {
    if (error instanceof TxConditionFailed) {
      if (error.index === 2) throw validationFailed([{ path: 'body.profile_id', message: 'no agent profile with this id in the account' }]);
      if (error.index === 3) throw forbidden(`quota exceeded: at most ${p.tenant.quota.max_devices} devices`, 'quota_exceeded');
      if (error.index >= 4) throw new TxConditionFailed(error.index - 4, false);
    }
    throw error;
  }
  return rec;
}

export async function createDevice(ctx: CallContext, body: { name: string; public_key: unknown; profile_id: string }): Promise<DeviceRecord> {
  const key = await publicKeyField(body.public_key);
  if (!(await getProfile(ctx.principal.tenantId, body.profile_id))) {
    throw validationFailed([{ path: 'body.profile_id', message: 'no agent profile with this id in the account' }]);
  }
  return enrolDevice(ctx, { name: body.name, key, profile_id: body.profile_id, via: 'account_credentials' });
}

export const listDevices = (ctx: CallContext, page: { limit: number; offset: number; cursor?: string }) =>
  listDeviceRecords(ctx.principal.tenantId, page);

export const REVOCATION_NOTE =
  'The device can no longer sign requests. Values it already read and database leases it already obtained are not withdrawn: rotate those values and revoke those leases (DELETE /api/v1/database/leases/{id}) if access must end.';

/** Revokes an active device: its key is deleted at once, so its next request fails. */
export async function revokeDevice(ctx: CallContext, id: string): Promise<DeviceRecord> {
  const tid = ctx.principal.tenantId;
  const device = await getDevice(tid, id);
  if (!device || device.status !== 'active') throw notFound('device');
  const at = nowIso();
  try {
    await commit(ctx, tid, [...deviceRevokeItems(tid, id, at, actorName(ctx)), counterAdd(tid, 'devices', -1)], {
      action: 'agent.device.revoke',
      resource: { type: 'agent_device', id, name: device.name },
      event: { type: 'agent.revoked', data: { id, name: device.name, profile_id: device.profile_id } },
    });
  } catch (error) {
    if (error instanceof TxConditionFailed) throw notFound('device'); // revoked concurrently
    throw error;
  }
  return { ...device, status: 'revoked', revoked_at: at, revoked_by: actorName(ctx) };
}

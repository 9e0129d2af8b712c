import { randomBytes } from 'node:crypto';
import {
  checkPoll,
  type DeviceAuthorizationResponse,
  formatUserCode,
  normaliseUserCode,
  oauthError,
  POLL_INTERVAL_SECONDS,
  sha256,
  startDeviceAuthorization,
} from '../auth/device-flow.js';
import type { CallContext, Principal } from '../auth/principal.js';
import { commit } from '../audit/audit.js';
import { forbidden, notFound, validationFailed } from '../core/errors.js';
import { newId, nowIso } from '../ids.js';
import { actorName } from '../resources/store.js';
import { getTenant } from '../store/tenants.js';
import { transact, TxConditionFailed } from '../store/tx.js';
import { identifyTenant } from '../tenancy/scope.js';

import { enrolDevice } from './admin.js';
import { displayFingerprint, type DevicePublicKey } from '../crypto/device-public-key.js';
import {
  authorizationPuts,
  authorizationUpdate,
  enrolmentTokenDelete,
  enrolmentTokenPut,
  getAuthorization,
  getAuthorizationByToken,
  getAuthorizationByUserCode,
  getProfile,
  profileExists,
  recordPoll,
  userCodeDelete,
  type AuthorizationRecord,
  type DeviceRecord,
} from './store.js';

/**
 * Enrolment by device authorization (RFC 8628), adapted to a device that brings its own
 * key pair. The device and token endpoints speak OAuth 2.0 on the wire (route wire `oauth`,
 * lib/routes.ts): form-encoded or JSON requests, top-level JSON answers and RFC 6749 §5.2
 * error objects, so any standard device-flow client can drive them.
 *
 * 1. `POST /api/v1/agent/oauth/device` {name, public_key, profile_id?, client_id?}: the
 *    device gets a `device_code` (secret; only its SHA-256 is stored), a `user_code`,
 *    `verification_uri`, `verification_uri_complete`, `expires_in` and `interval`.
 * 2. A user holding agents:approve reviews the request by user code
 *    (`POST /api/v1/agents/oauth/review`) and approves it into one of the account's
 *    profiles or denies it (`POST /api/v1/agents/oauth/approve`). The user code is single-use.
 * 3. The device polls `POST /api/v1/agent/oauth/token`
 *    {grant_type=urn:ietf:params:oauth:grant-type:device_code, device_code, client_id?}: 400
 *    `authorization_pending`, `slow_down` (polled sooner than `interval`; the interval grows
 *    by 5 s), `access_denied`, `expired_token`, `invalid_grant`; once approved, 200 with a
 *    one-time `access_token` of `token_type` `Bearer` (RFC 6750): the enrolment token.
 * 4. `POST /api/v1/agent/oauth/enroll` with `Authorization: Bearer <access_token>` (or
 *    {enrollment_token}): binds the key to a new device in the approver's account and
 *    returns the device id, which is the `keyid` of its signed requests.
 */

export async function startAuthorization(
  input: { name: string; key: DevicePublicKey; profile_id?: string | undefined; client_id?: string | undefined },
  verificationUri: string,
): Promise<DeviceAuthorizationResponse> {
  return startDeviceAuthorization(({ codeHash, userCodeHash, expiresAt }) => {
    const rec: AuthorizationRecord = {
      id: newId(),
      code_hash: codeHash,
      user_code_hash: userCodeHash,
      name: input.name,
      public_key: input.key.jwk,
      algorithm: input.key.algorithm,
      fingerprint: input.key.fingerprint,
      requested_profile_id: input.profile_id ?? null,
      client_id: input.client_id ?? null,
      status: 'pending',
      created_at: nowIso(),
      expires_at: expiresAt,
      interval: POLL_INTERVAL_SECONDS,
      last_poll_at: 0,
      tenant_id: null,
      profile_id: null,
      decided_by: null,
      decided_at: null,
      token_hash: null,
      device_id: null,
    };
    // kept a day past expiry so that late polls still get expired_token, then removed by TTL
    return authorizationPuts(rec, rec.expires_at + 86_400);
  }, verificationUri);
}

interface TokenResponse {
  readonly access_token: string;
  /** RFC 6750: whoever holds the enrolment token may enrol (once) at /api/v1/agent/oauth/enroll. */
  readonly token_type: 'Bearer';
  readonly expires_in: number;
}

/** One poll of the token endpoint (RFC 8628 §3.4–3.5). `clientId`: the client_id the poll names, if any. */
export async function pollToken(deviceCode: string, clientId?: string, nowMs = Date.now()): Promise<TokenResponse> {
  const now = Math.floor(nowMs / 1000);
  const rec = await checkPoll(
    await getAuthorization(sha256(deviceCode)),
    clientId,
    (p) => recordPoll(p.codeHash, p.previous, p.at, p.interval),
    nowMs,
  );
  // approved: the record names the approver's account (written in its session, with its owner
  // mark); from here on every call uses that account's tenant session (a tenant route,
  // lib/routes.ts SELF_IDENTIFYING_TENANT_ROUTES), never the function's own role
  if (!rec.tenant_id) throw oauthError('invalid_grant', 'unknown device code');
  identifyTenant(rec.tenant_id);
  const token = randomBytes(32).toString('base64url');
  const tokenHash = sha256(token);
  try {
    await transact([
      authorizationUpdate(rec.code_hash, 'approved', { status: 'issued', token_hash: tokenHash }),
      enrolmentTokenPut(tokenHash, rec.code_hash, rec.expires_at + 86_400),
    ]);
  } catch (error) {
    if (error instanceof TxConditionFailed) throw oauthError('invalid_grant', 'this device code has already been used');
    throw error;
  }
  return { access_token: token, token_type: 'Bearer', expires_in: Math.max(1, rec.expires_at - now) };
}

/** The pending request a user code names, or 404 (unknown, used, expired: the same answer). */
async function pendingByUserCode(userCode: string): Promise<{ rec: AuthorizationRecord; code: string }> {
  const code = normaliseUserCode(userCode);
  const now = Math.floor(Date.now() / 1000);
  const rec = code ? await getAuthorizationByUserCode(sha256(code), now) : undefined;
  if (!code || !rec || rec.status !== 'pending' || now >= rec.expires_at) throw notFound('pending device authorization for this user code');
  return { rec, code };
}

export async function reviewAuthorization(ctx: CallContext, userCode: string) {
  const { rec, code } = await pendingByUserCode(userCode);
  const requested = rec.requested_profile_id ? await getProfile(ctx.principal.tenantId, rec.requested_profile_id) : undefined;
  return {
    user_code: formatUserCode(code),
    status: rec.status,
    device_name: rec.name,
    client_id: rec.client_id,
    key_fingerprint: displayFingerprint(rec.fingerprint),
    algorithm: rec.algorithm,
    requested_profile: rec.requested_profile_id
      ? { id: rec.requested_profile_id, name: requested?.name ?? null, exists: requested !== undefined, enabled: requested?.enabled ?? null }
      : null,
    created_at: rec.created_at,
    expires_at: new Date(rec.expires_at * 1000).toISOString(),
  };
}

export async function decideAuthorization(
  ctx: CallContext,
  input: { user_code: string; decision: 'approve' | 'deny'; profile_id?: string | undefined },
) {
  const tid = ctx.principal.tenantId;
  const { rec } = await pendingByUserCode(input.user_code);
  const base = { decided_by: actorName(ctx), decided_at: nowIso(), tenant_id: tid };
  const resource = { type: 'agent_authorization', id: rec.id, name: rec.name };
  const fingerprint = displayFingerprint(rec.fingerprint);
  if (input.decision === 'deny') {
    try {
      await commit(
        ctx,
        tid,
        [authorizationUpdate(rec.code_hash, 'pending', { status: 'denied', ...base }), userCodeDelete(rec.user_code_hash, rec.code_hash)],
        {
          action: 'agent.authorization.deny',
          resource,
          detail: { fingerprint },
          event: { type: 'agent.denied', data: { authorization_id: rec.id, name: rec.name, fingerprint } },
        },
      );
    } catch (error) {
      if (error instanceof TxConditionFailed) throw notFound('pending device authorization for this user code');
      throw error;
    }
    return { status: 'denied' as const, device_name: rec.name, key_fingerprint: fingerprint };
  }
  const profileId = input.profile_id ?? rec.requested_profile_id;
  if (!profileId) throw validationFailed([{ path: 'body.profile_id', message: 'required: the device requested no profile' }]);
  if (!(await getProfile(tid, profileId)))
    throw validationFailed([{ path: 'body.profile_id', message: 'no agent profile with this id in the account' }]);
  try {
    await commit(
      ctx,
      tid,
      [
        authorizationUpdate(rec.code_hash, 'pending', { status: 'approved', profile_id: profileId, ...base }),
        userCodeDelete(rec.user_code_hash, rec.code_hash),
        profileExists(tid, profileId),
      ],
      {
        action: 'agent.authorization.approve',
        resource,
        detail: { fingerprint, profile_id: profileId },
        event: { type: 'agent.approved', data: { authorization_id: rec.id, name: rec.name, fingerprint, profile_id: profileId } },
      },
    );
  } catch (error) {
    if (error instanceof TxConditionFailed) {
      if (error.index === 2) throw validationFailed([{ path: 'body.profile_id', message: 'no agent profile with this id in the account' }]);
      throw notFound('pending device authorization for this user code');
    }
    throw error;
  }
  return { status: 'approved' as const, device_name: rec.name, key_fingerprint: fingerprint, profile_id: profileId };
}

/**
 * Completes an approved authorization: the key becomes a device of the approver's account,
 * in one transaction with the authorization's last state change and the token's deletion
 * (so a token enrols at most one device). The device itself is the audit actor.
 */
export async function completeEnrolment(
  enrolmentToken: string,
  request: { requestId: string; sourceIp: string | null; userAgent: string | null },
): Promise<{ device: DeviceRecord; tenantId: string }> {
  const now = Math.floor(Date.now() / 1000);
  const tokenHash = sha256(enrolmentToken);
  const rec = await getAuthorizationByToken(tokenHash);
  if (!rec || rec.status !== 'issued' || !rec.tenant_id || !rec.profile_id)
    throw oauthError('invalid_grant', 'unknown or already used enrolment token');
  if (now >= rec.expires_at) throw oauthError('expired_token', 'the enrolment token has expired: start a new device authorization');
  // the token's authorization names the approver's account: the rest runs in its tenant session
  identifyTenant(rec.tenant_id);
  const tenant = await getTenant(rec.tenant_id);
  if (!tenant) throw oauthError('invalid_grant', 'unknown or already used enrolment token');
  if (tenant.status !== 'active') throw forbidden('account is suspended', 'tenant_suspended');
  const deviceId = newId();
  const principal: Principal = { kind: 'device', tenantId: tenant.id, tenant, id: deviceId, user: null, scopes: [], operator: false };
  const ctx: CallContext = { principal, ...request };
  try {
    const device = await enrolDevice(
      ctx,
      {
        id: deviceId,
        name: rec.name,
        key: { jwk: rec.public_key, algorithm: rec.algorithm, fingerprint: rec.fingerprint },
        profile_id: rec.profile_id,
        via: 'device_authorization',
        created_by: rec.decided_by,
      },
      [authorizationUpdate(rec.code_hash, 'issued', { status: 'enrolled', device_id: deviceId }), enrolmentTokenDelete(tokenHash)],
    );
    return { device, tenantId: tenant.id };
  } catch (error) {
    if (error instanceof TxConditionFailed) throw oauthError('invalid_grant', 'unknown or already used enrolment token');
    throw error;
  }
}

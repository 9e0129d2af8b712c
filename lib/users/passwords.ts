import { createHash, randomBytes } from 'node:crypto';
import { commit } from '../audit/audit.js';
import { authenticateBearer, bearerIsNotAccessToken, type Headers, header } from '../authn/authenticate.js';
import type { CallContext, Principal } from '../auth/principal.js';
import { open, seal } from '../crypto/envelope.js';
import { badRequest, forbidden, notFound, unauthorized } from '../core/errors.js';
import { newId, nowIso } from '../ids.js';
import { tableName } from '../store/client.js';
import { keys } from '../store/keys.js';
import { getTenant, type Tenant } from '../store/tenants.js';
import { TxConditionFailed, type TxItem } from '../store/tx.js';
import { openSession, type RequestFacts, revokeUserSessions, type SessionTokens } from './sessions.js';
import { peek, spend } from './single-use.js';
import { identifyTenant } from '../tenancy/scope.js';
import { type SrpVersion, serverEphemeral, validClientEphemeral, validVerifier, verifyClientProof } from './srp.js';
import { putSrpChallenge, readPasswordReset } from './store.js';
import { getUser } from './users.js';

/**
 * Zero-knowledge passwords (SRP-6a, lib/users/srp.ts). A user sets a password by sending
 * a salt and a verifier, either with a single-use reset token (from the operator's
 * reset-password, or for an account's first password) or with an access token of its own
 * session; signing in is two steps (A → salt, B; then M1 → M2 and a session). The verifier
 * is sealed with the account's data key; the password never reaches the service.
 */
const RESET_SECONDS = 3600;
const CHALLENGE_SECONDS = 120;
export const RESET_TOKEN_RE = /^scpr_[A-Za-z0-9_-]{43}$/;
const hashToken = (t: string) => createHash('sha256').update(t, 'utf8').digest('hex');
const verifierScope = (tenantId: string, email: string) => ({ tenantId, type: 'srp_verifier', id: email, version: 1 });
const challengeScope = (tenantId: string, id: string) => ({ tenantId, type: 'srp_challenge', id, version: 1 });
const epochIn = (seconds: number) => Math.floor(Date.now() / 1000) + seconds;

interface RegisterInput {
  readonly tenant_id: string;
  readonly email: string;
  readonly salt: string;
  readonly verifier: string;
  /** The SRP version the verifier's client signs in with (lib/users/srp.ts); absent: 1. */
  readonly srp_version?: SrpVersion;
  readonly reset_token?: string;
}

/** The actor of a user's own change with no session yet: the user, by its reset token. */
const userContext = (tenant: Tenant, email: string, id: string, request: RequestFacts): CallContext => {
  const principal: Principal = { kind: 'user_token', tenantId: tenant.id, tenant, id, user: email, scopes: [], operator: false };
  return { principal, ...request };
};

/**
 * Stores a salt and verifier. Authorized by the reset token (spent in the same transaction)
 * or by the caller's own session (`principal`); a session of another account does not find
 * the user (404).
 */
export async function registerVerifier(
  input: RegisterInput,
  headers: Headers,
  request: RequestFacts,
): Promise<{ email: string; srp_version: SrpVersion }> {
  if (!validVerifier(input.verifier))
    throw badRequest('verifier must be g^x mod N of the 2048-bit group (1 < v < N)', [{ path: 'body.verifier', message: 'out of range' }]);
  let ctx: CallContext;
  const extra: TxItem[] = [];
  let tenant: Tenant | undefined;
  if (input.reset_token !== undefined) {
    // the request names the account: the reset item (a lookup item naming it, with its owner
    // mark: one naming another account than the one it was written for is dropped at the read)
    // and everything after it in that account's tenant session (lib/routes.ts SELF_IDENTIFYING_TENANT_ROUTES)
    identifyTenant(input.tenant_id);
    const hash = hashToken(input.reset_token);
    const item = await readPasswordReset(hash);
    if (!item || item.tenant_id !== input.tenant_id || item.email !== input.email || Date.parse(String(item.expires_at)) <= Date.now()) {
      throw unauthorized('unknown, used or expired reset token');
    }
    tenant = await getTenant(input.tenant_id);
    if (!tenant) throw unauthorized('unknown, used or expired reset token');
    ctx = userContext(tenant, input.email, item.id as string, request);
    extra.push({ Delete: { TableName: tableName(), Key: keys.passwordReset(hash), ConditionExpression: 'attribute_exists(pk)' } });
  } else {
    // an API key or API token is refused before anything is read (this route's execution role
    // reads no credential item); an access token names its account and is checked in its session
    if (bearerIsNotAccessToken(headers))
      throw forbidden('a password is set with a reset token or by the user in its own session, not with an API key or an OAuth client\u2019s token');
    const principal = header(headers, 'authorization') ? await authenticateBearer(headers) : null;
    if (!principal) throw unauthorized('send a reset token, or Authorization: Bearer <an access token of your session>');
    if (principal.kind !== 'user_token' || principal.client !== undefined)
      throw forbidden('a password is set with a reset token or by the user in its own session, not with an API key or an OAuth client\u2019s token');
    if (principal.tenantId !== input.tenant_id) throw notFound('user');
    if (principal.user !== input.email) throw forbidden('a session sets only its own user\u2019s password');
    tenant = principal.tenant;
    ctx = { principal, ...request };
  }
  if (tenant.status !== 'active') throw forbidden('account is suspended', 'tenant_suspended');
  const sealed = await seal(verifierScope(tenant.id, input.email), input.verifier.toLowerCase());
  try {
    await commit(
      ctx,
      tenant.id,
      [
        ...extra,
        {
          Update: {
            TableName: tableName(),
            Key: keys.user(tenant.id, input.email),
            UpdateExpression: 'SET srp_salt = :s, srp_verifier = :v, srp_version = :ver, srp_updated_at = :at',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeValues: { ':s': input.salt.toLowerCase(), ':v': sealed, ':ver': input.srp_version ?? 1, ':at': nowIso() },
          },
        },
      ],
      {
        action: 'user.password_set',
        resource: { type: 'user', id: input.email, name: input.email },
        detail: { via: extra.length > 0 ? 'reset_token' : 'session', srp_version: input.srp_version ?? 1 },
      },
    );
  } catch (error) {
    if (error instanceof TxConditionFailed && extra.length > 0 && error.index === 0) throw unauthorized('unknown, used or expired reset token');
    if (error instanceof TxConditionFailed && !error.conflict) throw notFound('user');
    throw error;
  }
  return { email: input.email, srp_version: input.srp_version ?? 1 };
}

/** A salt for an unknown user or one without a password, the same at every attempt, so the answer does not tell. */
const decoySalt = (tenant: Tenant | undefined, tenantId: string, email: string) =>
  createHash('sha256')
    .update(`srp-decoy\0${tenantId}\0${tenant?.created_at ?? ''}\0${email}`)
    .digest('hex');

/**
 * Step 1: the client's A and the version of its handshake (absent: 1); the answer is the
 * user's salt and the server's B in that version (a decoy for an unknown user). Any verifier
 * answers either version here, so the answer does not tell a user's version; step 2 refuses
 * a version-1 handshake for a verifier registered as version 2.
 */
export async function beginVerify(input: { tenant_id: string; email: string; client_public: string; srp_version?: SrpVersion }) {
  const version = input.srp_version ?? 1;
  if (!validClientEphemeral(input.client_public)) throw badRequest('A mod N must not be 0', [{ path: 'body.client_public', message: 'invalid' }]);
  // the request names the account: its user, verifier and the challenge naming it (with its
  // owner mark) in that account's tenant session; an unknown account or user gets a decoy all the same
  identifyTenant(input.tenant_id);
  const [tenant, user] = await Promise.all([getTenant(input.tenant_id), getUser(input.tenant_id, input.email)]);
  const known = tenant && user?.srp_verifier && user.srp_salt;
  const verifier = known ? (await open(verifierScope(input.tenant_id, input.email), user.srp_verifier!)).toString('utf8') : undefined;
  // a decoy: a random group element in place of a verifier, and no secret to keep
  const ephemeral = serverEphemeral(verifier ?? randomBytes(255).toString('hex').padStart(512, '0'), version);
  const id = newId();
  const expiresAt = new Date(Date.now() + CHALLENGE_SECONDS * 1000).toISOString();
  await putSrpChallenge(id, {
    tenant_id: input.tenant_id,
    email: input.email,
    decoy: !known,
    client_public: input.client_public.toLowerCase(),
    srp_version: version,
    ...(known ? { server_secret: await seal(challengeScope(input.tenant_id, id), ephemeral.secret) } : {}),
    expires_at: expiresAt,
    ttl: epochIn(CHALLENGE_SECONDS),
  });
  return {
    challenge_id: id,
    salt: known ? user.srp_salt! : decoySalt(tenant, input.tenant_id, input.email),
    server_public: ephemeral.public,
    srp_version: version,
    expires_at: expiresAt,
  };
}

const failed = () => unauthorized('the password proof was refused: start again with a new challenge', 'sign_in_failed');

/** Step 2: the client's proof M1. The challenge is spent whatever the outcome (single use). */
export async function finishVerify(
  input: { challenge_id: string; client_proof: string },
  request: RequestFacts,
): Promise<SessionTokens & { server_proof: string }> {
  // the challenge names the account (written in its session by step 1, with its owner mark),
  // read on the function's own role; the spend and everything after it in that account's session
  const seen = await peek(keys.srpChallenge(input.challenge_id));
  if (!seen || typeof seen.tenant_id !== 'string' || !seen.tenant_id) throw failed();
  identifyTenant(seen.tenant_id);
  const c = await spend(keys.srpChallenge(input.challenge_id));
  if (!c || c.tenant_id !== seen.tenant_id || c.decoy === true || Date.parse(String(c.expires_at)) <= Date.now()) throw failed();
  const tenantId = c.tenant_id as string;
  const email = c.email as string;
  const [tenant, user] = await Promise.all([getTenant(tenantId), getUser(tenantId, email)]);
  if (!tenant || !user?.srp_verifier || !user.srp_salt) throw failed();
  const version = (c.srp_version ?? 1) as SrpVersion;
  // a verifier registered for RFC 5054 (version 2) no longer answers the old multiplier
  if (version < (user.srp_version ?? 1)) throw failed();
  const serverProof = verifyClientProof({
    identity: email,
    salt: user.srp_salt,
    verifier: (await open(verifierScope(tenantId, email), user.srp_verifier)).toString('utf8'),
    clientPublic: c.client_public as string,
    serverSecret: (await open(challengeScope(tenantId, input.challenge_id), c.server_secret as Uint8Array)).toString('utf8'),
    clientProof: input.client_proof,
    version,
  });
  if (!serverProof) throw failed();
  return { ...(await openSession(tenant, user, 'password', request)), server_proof: serverProof };
}

/**
 * The operator's reset: the user's verifier is removed (its password stops working at
 * once), the user's open sessions end, and a single-use reset token, valid one hour, is returned once; only its hash is
 * stored. Audited in the user's account.
 */
export async function resetPassword(
  ctx: CallContext,
  input: { tenant_id: string; email: string },
): Promise<{ reset_token: string; expires_at: string; sessions_ended: number }> {
  const [tenant, user] = await Promise.all([getTenant(input.tenant_id), getUser(input.tenant_id, input.email)]);
  if (!tenant) throw notFound('tenant');
  if (!user) throw notFound('user');
  const token = `scpr_${randomBytes(32).toString('base64url')}`;
  const id = newId();
  const expiresAt = new Date(Date.now() + RESET_SECONDS * 1000).toISOString();
  try {
    await commit(
      ctx,
      tenant.id,
      [
        {
          Update: {
            TableName: tableName(),
            Key: keys.user(tenant.id, input.email),
            UpdateExpression: 'REMOVE srp_salt, srp_verifier, srp_version, srp_updated_at',
            ConditionExpression: 'attribute_exists(pk)',
          },
        },
        {
          Put: {
            TableName: tableName(),
            Item: {
              ...keys.passwordReset(hashToken(token)),
              id,
              tenant_id: tenant.id,
              email: input.email,
              created_at: nowIso(),
              expires_at: expiresAt,
              ttl: epochIn(RESET_SECONDS),
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
      ],
      {
        action: 'user.password_reset',
        resource: { type: 'user', id: input.email, name: input.email },
        detail: { reset_id: id, expires_at: expiresAt },
      },
    );
  } catch (error) {
    if (error instanceof TxConditionFailed && error.index === 0) throw notFound('user');
    throw error;
  }
  // whoever held the old password loses the sessions it opened
  const sessionsEnded = await revokeUserSessions(ctx, tenant.id, input.email, 'password_reset');
  return { reset_token: token, expires_at: expiresAt, sessions_ended: sessionsEnded };
}

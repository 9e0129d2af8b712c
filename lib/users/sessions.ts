import { createHash, randomBytes } from 'node:crypto';
import { commit } from '../audit/audit.js';
import { open, seal } from '../crypto/envelope.js';
import { type ClientTokenFacts, issueAccessToken, verifyAccessToken } from '../auth/jwt.js';
import type { CallContext, Principal } from '../auth/principal.js';
import { hasScope } from '../auth/scopes.js';
import { badRequest, forbidden, notFound, unauthorized } from '../core/errors.js';
import { newId, nowIso } from '../ids.js';
import { tableName } from '../store/client.js';
import { queryAll } from '../store/pagination.js';
import { keys } from '../store/keys.js';
import { getTenant, type Tenant } from '../store/tenants.js';
import { TxConditionFailed, type TxItem } from '../store/tx.js';
import { isIdentityScope } from '../auth/authorization-server.js';
import { readRefreshToken, readSession, type SessionItem } from './store.js';
import { getUser, scopesOf, type User } from './users.js';
import { identifyTenant, TenantScopeViolation } from '../tenancy/scope.js';

/**
 * Sign-in sessions (docs/api.md, "Sign-in"). A session yields a short-lived access token
 * (JWT, ES256, the account's token-signing key, claim `sid`: lib/auth/jwt.ts checks the
 * session on every request) and an opaque refresh token that rotates on every use. Only
 * the refresh token's SHA-256 is stored (a global lookup: the refresh request carries the
 * token alone). Presenting a used refresh token revokes the whole session, i.e. every token
 * of its family (OAuth 2.0 Security BCP, RFC 9700 §4.14.2), except a retry of a lost answer
 * (REFRESH_RETRY_SECONDS).
 */
const ACCESS_TOKEN_SECONDS = 900;
/** A session's absolute lifetime: refreshing never extends it. */
const SESSION_SECONDS = 7 * 86_400;

export const REFRESH_TOKEN_RE = /^scr_[A-Za-z0-9_-]{43}$/;
const hashToken = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');
const epoch = (iso: string) => Math.floor(Date.parse(iso) / 1000);

/** How the session was opened; `cli`: a CLI login (lib/users/cli-login.ts) approved from a session of the same person. */
type SignInMethod = 'password' | 'sso' | 'passkey' | 'cli';

/** The request facts of a sign-in route (no principal yet). */
export type RequestFacts = Omit<CallContext, 'principal'>;

/** A sign-in route's request facts from its handler input. */
export const requestFacts = (input: { requestId: string; sourceIp: string | null; headers: Readonly<Record<string, string>> }): RequestFacts => ({
  requestId: input.requestId,
  sourceIp: input.sourceIp,
  userAgent: input.headers['user-agent'] ?? null,
});

export interface SessionTokens {
  readonly token_type: 'Bearer';
  readonly access_token: string;
  readonly expires_in: number;
  readonly refresh_token: string;
  readonly session_id: string;
  readonly scope: string;
}

/** The actor of a session's own audit entries: the user, by its session. */
function sessionContext(tenant: Tenant, email: string, sessionId: string, scopes: readonly string[], request: RequestFacts): CallContext {
  const principal: Principal = { kind: 'user_token', tenantId: tenant.id, tenant, id: sessionId, user: email, scopes, operator: false };
  return { principal, ...request };
}

function newRefresh(tenantId: string, sessionId: string, expiresAt: string): { token: string; item: TxItem } {
  const token = `scr_${randomBytes(32).toString('base64url')}`;
  return {
    token,
    item: {
      Put: {
        TableName: tableName(),
        Item: {
          ...keys.refreshToken(hashToken(token)),
          tenant_id: tenantId,
          session_id: sessionId,
          used: false,
          created_at: nowIso(),
          ttl: epoch(expiresAt),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
  };
}

async function tokens(
  tenantId: string,
  email: string,
  scopes: readonly string[],
  sessionId: string,
  refresh: string,
  client?: ClientTokenFacts,
): Promise<SessionTokens> {
  return {
    token_type: 'Bearer',
    access_token: await issueAccessToken(tenantId, email, scopes, ACCESS_TOKEN_SECONDS, sessionId, client),
    expires_in: ACCESS_TOKEN_SECONDS,
    refresh_token: refresh,
    session_id: sessionId,
    scope: scopes.join(' '),
  };
}

/** Opens a session for a user who just proved who they are; `extra` joins the transaction (a consumed challenge). */
export async function openSession(
  tenant: Tenant,
  user: User,
  method: SignInMethod,
  request: RequestFacts,
  extra: TxItem[] = [],
): Promise<SessionTokens> {
  const out = await startSession(
    tenant,
    { subject: user.email, method, scopes: scopesOf(user), seconds: SESSION_SECONDS, refresh: true },
    request,
    extra,
  );
  return out as SessionTokens;
}

/**
 * What an OAuth client's session was granted (lib/oauth): the client, the scopes (a refresh
 * gives the user's current scopes among these, never more), and how long it lasts. A
 * `client_credentials` or workload session has no refresh token and lasts as long as its
 * one access token: its tokens are still a session's, revoked as sessions are.
 */
interface ClientGrant {
  readonly client_id: string;
  /** The authorization server's issuer (lib/oauth): its tokens are RFC 9068 tokens of that issuer, naming the client. */
  readonly issuer?: string;
  readonly subject: string;
  readonly method: 'oauth_code' | 'client_credentials' | 'workload';
  readonly scopes: readonly string[];
  readonly seconds?: number;
}

export type GrantTokens = Omit<SessionTokens, 'refresh_token' | 'session_id'> & { readonly refresh_token?: string };

/**
 * Opens the session of an OAuth grant: an authorization code's (with a refresh token) or a
 * client's own (without). `extra` joins the transaction; given as a function, it is handed the
 * new session's id (an authorization code records the session it was redeemed for).
 */
export async function openClientSession(
  tenant: Tenant,
  grant: ClientGrant,
  request: RequestFacts,
  extra: TxItem[] | ((sessionId: string) => TxItem[]) = [],
): Promise<GrantTokens> {
  const refresh = grant.method === 'oauth_code';
  const seconds = grant.seconds ?? (refresh ? SESSION_SECONDS : ACCESS_TOKEN_SECONDS);
  const { session_id: _sid, ...out } = await startSession(
    tenant,
    {
      subject: grant.subject,
      method: grant.method,
      scopes: grant.scopes,
      seconds,
      refresh,
      client_id: grant.client_id,
      ...(grant.issuer ? { issuer: grant.issuer } : {}),
    },
    request,
    extra,
  );
  return out;
}

interface SessionStart {
  readonly subject: string;
  readonly method: SignInMethod | ClientGrant['method'];
  readonly scopes: readonly string[];
  readonly seconds: number;
  readonly refresh: boolean;
  readonly client_id?: string;
  readonly issuer?: string;
}

async function startSession(
  tenant: Tenant,
  start: SessionStart,
  request: RequestFacts,
  extraItems: TxItem[] | ((sessionId: string) => TxItem[]),
): Promise<GrantTokens & { session_id: string }> {
  if (tenant.status !== 'active') throw forbidden('account is suspended', 'tenant_suspended');
  const sessionId = newId();
  const extra = typeof extraItems === 'function' ? extraItems(sessionId) : extraItems;
  const at = nowIso();
  const expiresAt = new Date(Date.now() + start.seconds * 1000).toISOString();
  const refresh = start.refresh ? newRefresh(tenant.id, sessionId, expiresAt) : undefined;
  const session: TxItem = {
    Put: {
      TableName: tableName(),
      Item: {
        ...keys.session(tenant.id, sessionId),
        id: sessionId,
        user: start.subject,
        method: start.method,
        status: 'active',
        created_at: at,
        expires_at: expiresAt,
        ttl: epoch(expiresAt),
        ...(start.client_id ? { client_id: start.client_id, scopes: [...start.scopes] } : {}),
        ...(start.issuer ? { issuer: start.issuer } : {}),
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
  const signIn: TxItem[] = start.client_id
    ? []
    : [
        {
          Update: {
            TableName: tableName(),
            Key: keys.user(tenant.id, start.subject),
            UpdateExpression: 'SET last_sign_in_at = :at',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeValues: { ':at': at },
          },
        },
      ];
  const ctx = sessionContext(tenant, start.subject, sessionId, start.scopes, request);
  await commit(ctx, tenant.id, [...extra, session, ...signIn, ...(refresh ? [refresh.item] : [])], {
    action: 'session.open',
    resource: { type: 'session', id: sessionId, name: start.subject },
    detail: { method: start.method, ...(start.client_id ? { client_id: start.client_id, scopes: start.scopes } : {}) },
  });
  const ttl = start.refresh ? Math.min(ACCESS_TOKEN_SECONDS, start.seconds) : start.seconds;
  return {
    token_type: 'Bearer',
    access_token: await issueAccessToken(tenant.id, start.subject, start.scopes, ttl, sessionId, clientFacts(start)),
    expires_in: ttl,
    ...(refresh ? { refresh_token: refresh.token } : {}),
    session_id: sessionId,
    scope: start.scopes.join(' '),
  };
}

/** What an OAuth client's token says of its client and issuer (RFC 9068); undefined for the service's own sessions. */
const clientFacts = (s: { readonly client_id?: string | undefined; readonly issuer?: string | undefined }): ClientTokenFacts | undefined =>
  s.client_id && s.issuer ? { clientId: s.client_id, issuer: s.issuer } : undefined;

type RevokeReason = 'sign_out' | 'refresh_token_reuse' | 'password_reset' | 'token_revocation' | 'authorization_code_reuse';

/** Ends a session: every access and refresh token of it is refused from the next request on. */
async function revoke(ctx: CallContext, tenantId: string, sessionId: string, reason: RevokeReason): Promise<void> {
  await commit(
    ctx,
    tenantId,
    [
      {
        Update: {
          TableName: tableName(),
          Key: keys.session(tenantId, sessionId),
          UpdateExpression: 'SET #s = :revoked, revoked_at = :at, revoked_reason = :why',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: { ':revoked': 'revoked', ':at': nowIso(), ':why': reason },
        },
      },
    ],
    { action: 'session.revoke', resource: { type: 'session', id: sessionId }, detail: { reason } },
  );
}

/**
 * Ends every open session of a user (an operator's password reset: whoever held the old
 * password loses the sessions it opened). Each is revoked as by a sign-out, with its own
 * audit entry; the count is returned.
 */
export async function revokeUserSessions(ctx: CallContext, tenantId: string, email: string, reason: 'password_reset'): Promise<number> {
  const open = await queryAll({
    pk: keys.tenant(tenantId).pk,
    sk: { prefix: keys.sessionPrefix },
    projection: ['id'],
    filter: { expression: '#u = :u AND #st = :active', names: { '#u': 'user', '#st': 'status' }, values: { ':u': email, ':active': 'active' } },
  });
  for (const item of open) await revoke(ctx, tenantId, item.id as string, reason);
  return open.length;
}

const reused = () => unauthorized('refresh token already used: the session is revoked; sign in again', 'refresh_token_reused');

/**
 * How long after a refresh its caller may present the same refresh token again and get the
 * same new refresh token (with a fresh access token): a client whose answer was lost (a
 * crash, a dropped connection between the commit and the answer) retries instead of being
 * signed out. Only while the new refresh token is still unused, by the same client; any
 * other second use is a replay and revokes the session.
 */
const REFRESH_RETRY_SECONDS = 30;
const successorScope = (tenantId: string, hash: string) => ({ tenantId, type: 'refresh_successor', id: hash, version: 1 });

/**
 * The answer of a refresh retried within REFRESH_RETRY_SECONDS: the new refresh token the
 * first refresh issued (kept sealed on the used token's item, with the account's data key)
 * while it is unused, with a fresh access token; undefined when the retry does not qualify.
 */
async function retriedRefresh(item: Record<string, unknown>, hash: string, session: SessionItem, scopes: readonly string[]) {
  const usedAt = Date.parse(String(item.used_at));
  if (!(item.successor instanceof Uint8Array) || !(Date.now() - usedAt <= REFRESH_RETRY_SECONDS * 1000)) return undefined;
  if (session.status !== 'active' || Date.parse(session.expires_at) <= Date.now()) return undefined;
  const tenantId = item.tenant_id as string;
  const successor = (await open(successorScope(tenantId, hash), item.successor)).toString('utf8');
  const next = await readRefreshToken(hashToken(successor));
  if (!next || next.used !== false || next.session_id !== session.id) return undefined;
  return tokens(tenantId, session.user, scopes, session.id, successor, clientFacts(session));
}

/**
 * Rotates a refresh token: the presented one is marked used and a new one issued, with a
 * fresh access token carrying the user's current scopes, in one transaction conditional on
 * the token being unused and the session active. A used token (a replay, the loser of two
 * concurrent uses, or another client's) revokes the session, except a retry of the same
 * client within REFRESH_RETRY_SECONDS while the new token is unused (retriedRefresh).
 */
export async function refreshSession(token: string, request: RequestFacts, clientId?: string): Promise<SessionTokens> {
  const hash = hashToken(token);
  const out = { Item: await readRefreshToken(hash) };
  if (!out.Item) throw unauthorized('unknown or expired refresh token');
  const tenantId = out.Item.tenant_id as string;
  const sessionId = out.Item.session_id as string;
  // the refresh item names its account (written in that account's session, with its owner mark:
  // lib/tenancy/lookups.ts, a forged one is dropped at the read); from here on every call uses
  // that account's tenant session (POST /api/v1/auth/refresh is a tenant route, lib/routes.ts
  // SELF_IDENTIFYING_TENANT_ROUTES), never the function's own role
  if (typeof tenantId !== 'string' || !tenantId) throw unauthorized('unknown or expired refresh token');
  try {
    identifyTenant(tenantId);
  } catch (error) {
    // the token endpoint already named the client's account: another account's refresh token is not this client's
    if (error instanceof TenantScopeViolation) throw badRequest('the refresh token was not issued to this client', undefined, 'invalid_grant');
    throw error;
  }
  const [tenant, session] = await Promise.all([getTenant(tenantId), readSession(tenantId, sessionId)]);
  if (!tenant || !session) throw unauthorized('unknown or expired refresh token');
  // a client's refresh token is that client's alone (RFC 6749 §6); a sign-in's is no client's
  const sameClient = (session.client_id ?? null) === (clientId ?? null);
  const user = await getUser(tenantId, session.user);
  const current = user ? scopesOf(user) : [];
  // identity scopes (openid, email, profile) are the person's own, held whatever their role
  const scopes = session.scopes ? session.scopes.filter((s) => isIdentityScope(s) || hasScope(current, s)) : current;
  const ctx = sessionContext(tenant, session.user, sessionId, scopes, request);
  if (out.Item.used === true) {
    const retried = sameClient && user && tenant.status === 'active' ? await retriedRefresh(out.Item, hash, session, scopes) : undefined;
    if (retried) return retried;
    if (session.status === 'active') await revoke(ctx, tenantId, sessionId, 'refresh_token_reuse');
    throw reused();
  }
  if (!sameClient) throw badRequest('the refresh token was not issued to this client', undefined, 'invalid_grant');
  if (session.status !== 'active' || Date.parse(session.expires_at) <= Date.now() || !user)
    throw unauthorized('the session has ended; sign in again');
  if (tenant.status !== 'active') throw forbidden('account is suspended', 'tenant_suspended');
  const next = newRefresh(tenantId, sessionId, session.expires_at);
  const sealedNext = await seal(successorScope(tenantId, hash), next.token);
  try {
    await commit(
      ctx,
      tenantId,
      [
        {
          Update: {
            TableName: tableName(),
            Key: keys.refreshToken(hash),
            // the new token, sealed, for a retry within REFRESH_RETRY_SECONDS (retriedRefresh)
            UpdateExpression: 'SET used = :t, used_at = :at, successor = :next',
            ConditionExpression: 'used = :f',
            ExpressionAttributeValues: { ':t': true, ':f': false, ':at': nowIso(), ':next': sealedNext },
          },
        },
        next.item,
        {
          Update: {
            TableName: tableName(),
            Key: keys.session(tenantId, sessionId),
            UpdateExpression: 'SET last_refreshed_at = :at',
            ConditionExpression: '#s = :active',
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: { ':at': nowIso(), ':active': 'active' },
          },
        },
      ],
      { action: 'session.refresh', resource: { type: 'session', id: sessionId, name: session.user } },
    );
  } catch (error) {
    if (error instanceof TxConditionFailed && (error.index === 0 || error.conflict)) {
      // the token was used meanwhile (or is being used concurrently): a replay
      await revoke(ctx, tenantId, sessionId, 'refresh_token_reuse');
      throw reused();
    }
    if (error instanceof TxConditionFailed) throw unauthorized('the session has ended; sign in again');
    throw error;
  }
  return tokens(tenantId, session.user, scopes, sessionId, next.token, clientFacts(session));
}

/** Sign-out of the caller's own session (the session its access token names). */
/** Sign-out's credential rule, which the route checks before it validates the body (functions/auth/sessions.ts): a session access token, not an API key. */
export function requireSessionToken(p: Principal): void {
  if (p.kind !== 'user_token') throw forbidden('sign-out ends a sign-in session: call it with a session access token, not an API key');
}

export async function signOut(ctx: CallContext): Promise<{ session_id: string }> {
  const p = ctx.principal;
  requireSessionToken(p);
  const session = await readSession(p.tenantId, p.id);
  if (!session) throw notFound('session');
  await revoke(ctx, p.tenantId, p.id, 'sign_out');
  return { session_id: p.id };
}

/**
 * Token revocation (RFC 7009) of a session's refresh token (`scr_…`) or access token: the
 * whole session ends (its every token is refused from the next request on), audited as the
 * session's own act. Whoever holds a token of the session may end it. A token of no live
 * session (unknown, expired, already revoked, not a session's) changes nothing and is no
 * error (RFC 7009 §2.2): the answer never tells whether a token was valid.
 */
export async function revokeSessionByToken(token: string, request: RequestFacts, clientId?: string): Promise<void> {
  const found = await sessionOfToken(token);
  if (!found) return;
  // RFC 7009 §2.1: an authenticated client revokes only the tokens issued to it
  if (clientId !== undefined && found.session?.client_id !== clientId) return;
  await endSession(found.tenantId, found.sessionId, request, 'token_revocation');
}

/**
 * The session a refresh token (`scr_…`) or a session's access token belongs to, with the
 * session item (undefined when it is gone) and, for a refresh token, whether it is still
 * the family's current one. Undefined for a token of no session.
 */
export async function sessionOfToken(
  token: string,
): Promise<{ tenantId: string; sessionId: string; session: SessionItem | undefined; refreshUsed?: boolean } | undefined> {
  try {
    return await tokenSession(token);
  } catch (error) {
    // the request already acts for another account (a client's): this token is of no session of it
    if (error instanceof TenantScopeViolation) return undefined;
    throw error;
  }
}

async function tokenSession(
  token: string,
): Promise<{ tenantId: string; sessionId: string; session: SessionItem | undefined; refreshUsed?: boolean } | undefined> {
  let tenantId: string | undefined;
  let sessionId: string | undefined;
  let refreshUsed: boolean | undefined;
  if (REFRESH_TOKEN_RE.test(token)) {
    const out = { Item: await readRefreshToken(hashToken(token)) };
    tenantId = out.Item?.tenant_id as string | undefined;
    sessionId = out.Item?.session_id as string | undefined;
    refreshUsed = out.Item?.used === true;
  } else {
    const claims = await verifyAccessToken(token);
    // tokenId is the session id for a session's access token (lib/auth/jwt.ts); other tokens name no session
    if (claims) [tenantId, sessionId] = [claims.tenantId, claims.tokenId];
  }
  if (!tenantId || !sessionId) return undefined;
  // the token names its account (a marked refresh item, or a verified access token, which named it
  // already): its session is read, and ended, in that account's tenant session
  identifyTenant(tenantId);
  const session = await readSession(tenantId, sessionId);
  return { tenantId, sessionId, session, ...(refreshUsed !== undefined ? { refreshUsed } : {}) };
}

/**
 * Ends a session named by its account and id, audited as the session's own act; a session
 * that is unknown or no longer active is left as it is. Token revocation (above), and an
 * authorization code presented again (RFC 6749 §4.1.2: the tokens issued for it are revoked,
 * lib/oauth/server.ts).
 */
export async function endSession(
  tenantId: string,
  sessionId: string,
  request: RequestFacts,
  reason: 'token_revocation' | 'authorization_code_reuse' | 'sign_out',
) {
  const [tenant, session] = await Promise.all([getTenant(tenantId), readSession(tenantId, sessionId)]);
  if (!tenant || !session || session.status !== 'active') return;
  const user = await getUser(tenantId, session.user);
  const ctx = sessionContext(tenant, session.user, sessionId, user ? scopesOf(user) : [], request);
  try {
    await revoke(ctx, tenantId, sessionId, reason);
  } catch (error) {
    if (!(error instanceof TxConditionFailed)) throw error;
  }
}

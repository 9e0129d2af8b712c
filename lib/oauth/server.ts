import { createHash, randomBytes } from 'node:crypto';
import { compactVerify, createLocalJWKSet, decodeJwt, decodeProtectedHeader, importJWK, jwtVerify, type JSONWebKeySet } from 'jose';
import { commit } from '../audit/audit.js';
import { checkAccessToken, signWithTokenKey, tokenKeyOf } from '../auth/jwt.js';
import type { CallContext, Principal } from '../auth/principal.js';
import { hasScope } from '../auth/scopes.js';
import { clientAccountOf, clientByClientId, clientSecretMatches } from '../federation/clients.js';
import { currentScope, identifyTenant, withTenant } from '../tenancy/scope.js';
import { getJwks } from '../federation/jwks.js';
import { badRequest, HttpError } from '../core/errors.js';
import { newId, nowIso } from '../ids.js';
import { KNOWN_SCOPES } from '../routes.js';
import { tableName } from '../store/client.js';
import { readItem } from '../resources/items.js';
import { keys } from '../store/keys.js';
import { getTenant, type Tenant } from '../store/tenants.js';
import { TxConditionFailed, type TxItem } from '../store/tx.js';
import {
  endSession as endBrowserSession,
  openClientSession,
  refreshSession,
  revokeSessionByToken,
  sessionOfToken,
  type GrantTokens,
  type RequestFacts,
} from '../users/sessions.js';
import { spend } from '../users/single-use.js';
import { getUser, scopesOf } from '../users/users.js';
import { markAssertionUsed, putAuthorizationCode, putConsentTicket } from './store.js';
import { IDENTITY_SCOPES, isIdentityScope, issuerOf, publicBase, sessionFromCookie, tokenEndpointOf } from '../auth/authorization-server.js';

/**
 * The authorization server of the clients registered at /api/v1/oidc/clients (RFC 6749,
 * RFC 7636, OpenID Connect Discovery): authorization code with PKCE (S256 only) and exact
 * redirect URI match, refresh with rotation (the sign-in sessions' refresh tokens, bound to
 * the client), and client_credentials; clients authenticate with client_secret_basic,
 * client_secret_post or private_key_jwt (RFC 7523, keys from the client's JWK set).
 *
 * Every grant opens a session (lib/users/sessions.ts) holding the client and the granted
 * scopes: its access tokens are the service's own (ES256, `sid`), accepted by every route
 * with exactly those scopes and refused from the moment the session is revoked.
 */
const CODE_SECONDS = 60;
/** How long a redeemed code is remembered: as long as the session it opened may live (7 days). */
const REDEEMED_CODE_SECONDS = 7 * 86_400;
const TICKET_SECONDS = 600;
const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const ASSERTION_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
const AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'private_key_jwt'] as const;
/** ID tokens live as long as the access token issued with them. */
const ID_TOKEN_SECONDS = 900;

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const epoch = (ms: number) => Math.floor(ms / 1000);

type Client = NonNullable<Awaited<ReturnType<typeof clientByClientId>>>;

const invalidClient = (message: string, basic: boolean) =>
  new HttpError(401, 'invalid_client', message, { headers: { 'WWW-Authenticate': basic ? 'Basic realm="token"' : 'Bearer' } });
const invalidGrant = (message: string) => badRequest(message, undefined, 'invalid_grant');
const invalidScope = (message: string) => badRequest(message, undefined, 'invalid_scope');

/** OpenID Provider Metadata (OpenID Connect Discovery 1.0 §3, RFC 8414 §2). */
export function providerMetadata(headers: Readonly<Record<string, string>>) {
  const issuer = issuerOf(headers);
  return {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: tokenEndpointOf(headers),
    // the authorization server's own set (lib/auth/jwt.ts serviceKeySet), never the account's, which holds keys users export
    jwks_uri: `${issuer}/jwks`,
    userinfo_endpoint: `${issuer}/userinfo`,
    // RFC 7662 / RFC 7009: confidential clients authenticate as at the token endpoint
    introspection_endpoint: `${issuer}/introspect`,
    introspection_endpoint_auth_methods_supported: [...AUTH_METHODS],
    introspection_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGS,
    // the service's RFC 7009 endpoint, shared with the CLI's sessions (one route, every session's tokens)
    revocation_endpoint: `${publicBase(headers)}/api/v1/auth/cli/revoke`,
    revocation_endpoint_auth_methods_supported: [...AUTH_METHODS, 'none'],
    revocation_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGS,
    // OpenID Connect RP-Initiated Logout 1.0
    end_session_endpoint: `${issuer}/logout`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['ES256'],
    userinfo_signing_alg_values_supported: [],
    scopes_supported: [...IDENTITY_SCOPES, ...KNOWN_SCOPES],
    claims_supported: ['iss', 'sub', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'at_hash', 'azp', 'email', 'email_verified'],
    token_endpoint_auth_methods_supported: [...AUTH_METHODS, 'none'],
    token_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGS,
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
  };
}

/** The scopes a request names (space-separated), each once; undefined when none are named. */
const scopeList = (scope: string | undefined) => (scope === undefined || scope.trim() === '' ? undefined : [...new Set(scope.trim().split(/ +/))]);

/**
 * The requested scopes, checked against what the client may ask for and what the service
 * knows; the client's own scopes when none is named. With a person (`identity`), the OpenID
 * Connect scopes are open to every client.
 */
function clientScopes(client: Client, requested: string[] | undefined, identity = false): string[] {
  const allowed = client.scopes.filter((s) => KNOWN_SCOPES.includes(s));
  if (!requested) return allowed;
  const refused = requested.filter((s) => !allowed.includes(s) && !(identity && isIdentityScope(s)));
  if (refused.length > 0)
    throw invalidScope(`scope not allowed for this client: ${refused.join(' ')} (it may ask for: ${allowed.join(' ') || 'none'})`);
  return requested;
}

/** A client's process (no user): its audit actor. */
function clientContext(tenant: Tenant, client: Client, request: RequestFacts): CallContext {
  const principal: Principal = {
    kind: 'api_key',
    tenantId: tenant.id,
    tenant,
    id: client.id,
    user: `client:${client.client_id}`,
    scopes: [],
    operator: false,
  };
  return { principal, ...request };
}

async function activeTenant(tenantId: string): Promise<Tenant> {
  const tenant = await getTenant(tenantId);
  if (!tenant || tenant.status !== 'active') throw invalidGrant('the account of this client is not active');
  return tenant;
}

// ---- client authentication (RFC 6749 §2.3, RFC 7523 §2.2) ----------------------------------

interface ClientCredentials {
  readonly client_id?: string | undefined;
  readonly client_secret?: string | undefined;
  readonly client_assertion_type?: string | undefined;
  readonly client_assertion?: string | undefined;
}

interface TokenRequest extends ClientCredentials {
  readonly grant_type: string;
  readonly client_id?: string | undefined;
  readonly client_secret?: string | undefined;
  readonly client_assertion_type?: string | undefined;
  readonly client_assertion?: string | undefined;
  readonly code?: string | undefined;
  readonly redirect_uri?: string | undefined;
  readonly code_verifier?: string | undefined;
  readonly refresh_token?: string | undefined;
  readonly scope?: string | undefined;
}

function basicCredentials(headers: Readonly<Record<string, string>>): { id: string; secret: string } | undefined {
  const m = /^basic +([A-Za-z0-9+/=]+)$/i.exec(headers.authorization?.trim() ?? '');
  if (!m) return undefined;
  const text = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon < 0) throw invalidClient('malformed Basic credentials: expected base64(client_id:client_secret)', true);
  try {
    return {
      id: decodeURIComponent(text.slice(0, colon).replace(/\+/g, ' ')),
      secret: decodeURIComponent(text.slice(colon + 1).replace(/\+/g, ' ')),
    };
  } catch {
    throw invalidClient('malformed Basic credentials: client_id and client_secret are form-urlencoded (RFC 6749 §2.3.1)', true);
  }
}

/** The client of a token request, authenticated with its registered method; 401 `invalid_client` otherwise. */
async function authenticateClient(body: ClientCredentials, headers: Readonly<Record<string, string>>, ctx: RequestFacts): Promise<Client> {
  const basic = basicCredentials(headers);
  const methods = [basic, body.client_secret, body.client_assertion].filter((m) => m !== undefined);
  if (methods.length > 1) throw badRequest('use exactly one client authentication method', undefined, 'invalid_request');
  if (basic) return secretClient(basic.id, basic.secret, 'client_secret_basic', body.client_id, true);
  if (body.client_secret !== undefined) return secretClient(body.client_id ?? '', body.client_secret, 'client_secret_post', body.client_id, false);
  if (body.client_assertion !== undefined) return assertionClient(body, headers, ctx);
  // a public client (token_endpoint_auth_method none) names itself; PKCE binds its code (RFC 7636)
  const client = body.client_id !== undefined ? await clientByClientId(body.client_id) : undefined;
  if (client?.token_endpoint_auth_method === 'none') return client;
  throw invalidClient('client authentication required: client_secret_basic, client_secret_post or private_key_jwt', true);
}

async function secretClient(
  id: string,
  secret: string,
  method: 'client_secret_basic' | 'client_secret_post',
  bodyId: string | undefined,
  basic: boolean,
) {
  if (bodyId !== undefined && bodyId !== id) throw invalidClient('client_id differs from the authenticated client', basic);
  const client = await clientByClientId(id);
  if (!client || !clientSecretMatches(client, secret)) throw invalidClient('unknown client or wrong secret', basic);
  if (client.token_endpoint_auth_method !== method) throw invalidClient(`the client authenticates with ${client.token_endpoint_auth_method}`, basic);
  return client;
}

async function assertionClient(body: ClientCredentials, headers: Readonly<Record<string, string>>, request: RequestFacts): Promise<Client> {
  if (body.client_assertion_type !== ASSERTION_TYPE) throw invalidClient(`client_assertion_type must be ${ASSERTION_TYPE}`, false);
  let claims: ReturnType<typeof decodeJwt>;
  try {
    claims = decodeJwt(body.client_assertion!);
  } catch {
    throw invalidClient('client_assertion is not a JWT', false);
  }
  const id = typeof claims.iss === 'string' ? claims.iss : '';
  if (claims.sub !== id || (body.client_id !== undefined && body.client_id !== id))
    throw invalidClient('the assertion must have iss = sub = client_id', false);
  const client = await clientByClientId(id);
  if (!client || client.token_endpoint_auth_method !== 'private_key_jwt' || !client.jwks_id)
    throw invalidClient('unknown client or not a private_key_jwt client', false);
  const tenant = await activeTenant(client.tenantId);
  let set: Awaited<ReturnType<typeof getJwks>>;
  try {
    set = await getJwks(clientContext(tenant, client, request), client.jwks_id);
  } catch {
    throw invalidClient('the client has no JWK set', false);
  }
  let payload: Awaited<ReturnType<typeof jwtVerify>>['payload'];
  try {
    ({ payload } = await jwtVerify(body.client_assertion!, createLocalJWKSet({ keys: set.keys } as JSONWebKeySet), {
      issuer: id,
      subject: id,
      audience: [issuerOf(headers), tokenEndpointOf(headers)],
      algorithms: ASSERTION_ALGS,
      requiredClaims: ['exp', 'jti'],
      maxTokenAge: '10m',
      clockTolerance: 30,
    }));
  } catch (error) {
    throw invalidClient(`client assertion refused: ${(error as Error).message}`, false);
  }
  // RFC 7523 §3: a jti is used once (kept until the assertion expires)
  if (!(await markAssertionUsed(client.tenantId, sha256(`${id}\n${String(payload.jti)}`), (payload.exp ?? 0) + 60)))
    throw invalidClient('client assertion already used (jti)', false);
  return client;
}

// ---- the token endpoint (RFC 6749 §4.1.3, §4.4, §6) -----------------------------------------

type TokenAnswer = Omit<GrantTokens, 'session_id'> & { readonly id_token?: string };

/**
 * The client_id a token request presents (Basic credentials, the body, or a client assertion's
 * issuer), unverified: it names the client's account (lib/federation/clients.ts), in whose tenant
 * session the token endpoint then works (a tenant route, lib/routes.ts
 * SELF_IDENTIFYING_TENANT_ROUTES): the client, its secret or JWK set, the code, the refresh
 * token's session and the session opened are that account's. A client_id naming another
 * account than its client's reaches nothing but that account's items, and fails there.
 */
function presentedClientId(body: ClientCredentials, headers: Readonly<Record<string, string>>): string | undefined {
  const basic = basicCredentials(headers);
  if (basic) return basic.id;
  if (body.client_id !== undefined) return body.client_id;
  if (body.client_assertion === undefined) return undefined;
  try {
    const iss = decodeJwt(body.client_assertion).iss;
    return typeof iss === 'string' ? iss : undefined;
  } catch {
    return undefined;
  }
}

export async function token(body: TokenRequest, headers: Readonly<Record<string, string>>, request: RequestFacts): Promise<TokenAnswer> {
  const account = clientAccountOf(presentedClientId(body, headers));
  if (account) identifyTenant(account);
  const client = await authenticateClient(body, headers, request);
  const needs = (grant: string) => {
    if (!client.grant_types.includes(grant)) throw badRequest(`the client is not registered for ${grant}`, undefined, 'unauthorized_client');
  };
  switch (body.grant_type) {
    case 'authorization_code':
      needs('authorization_code');
      return redeemCode(client, body, headers, request);
    case 'refresh_token': {
      needs('refresh_token');
      if (!body.refresh_token) throw badRequest('refresh_token is required', undefined, 'invalid_request');
      try {
        const { session_id: _s, ...out } = await refreshSession(body.refresh_token, request, client.client_id);
        return out;
      } catch (error) {
        // an unknown, used (the family is now revoked) or ended refresh token: RFC 6749 §5.2 invalid_grant
        if (error instanceof HttpError && error.status === 401) throw invalidGrant(error.message);
        throw error;
      }
    }
    case 'client_credentials': {
      needs('client_credentials');
      const tenant = await activeTenant(client.tenantId);
      const scopes = clientScopes(client, scopeList(body.scope));
      const grant = {
        client_id: client.client_id,
        issuer: issuerOf(headers),
        subject: `client:${client.client_id}`,
        method: 'client_credentials' as const,
        scopes,
      };
      return openClientSession(tenant, grant, request);
    }
    default:
      throw badRequest(
        `grant_type must be authorization_code, refresh_token or client_credentials (workload token exchange: POST /api/v1/auth/workload/token)`,
        undefined,
        'unsupported_grant_type',
      );
  }
}

const codeReused = () => invalidGrant('authorization code already used: it is refused, and the tokens issued for it are revoked');

/** RFC 6749 §4.1.2: a code presented again is refused and the grant it gave (its session: every access and refresh token) revoked. */
async function refuseReusedCode(item: Record<string, unknown>, request: RequestFacts): Promise<never> {
  await endBrowserSession(item.tenant_id as string, item.session_id as string, request, 'authorization_code_reuse');
  throw codeReused();
}

/**
 * A code is redeemed once: the session it opens is recorded on the code item in the same
 * transaction (conditional on no session being recorded yet), and the item is kept as long as
 * that session may live, so a second presentation, however late, finds the session to revoke.
 */
async function redeemCode(
  client: Client,
  body: TokenRequest,
  headers: Readonly<Record<string, string>>,
  request: RequestFacts,
): Promise<TokenAnswer> {
  if (!body.code || !body.code_verifier || !body.redirect_uri)
    throw badRequest('code, code_verifier and redirect_uri are required', undefined, 'invalid_request');
  const codeKey = keys.oauthCode(sha256(body.code));
  const item = await readItem(codeKey);
  if (item && typeof item.session_id === 'string') return refuseReusedCode(item, request);
  if (!item || (item.expires_at as string) <= nowIso()) throw invalidGrant('unknown, used or expired authorization code');
  if (item.client_id !== client.client_id) throw invalidGrant('the code was issued to another client');
  if (item.redirect_uri !== body.redirect_uri) throw invalidGrant('redirect_uri differs from the authorization request');
  const challenge = createHash('sha256').update(body.code_verifier, 'ascii').digest('base64url');
  if (challenge !== item.code_challenge) throw invalidGrant('code_verifier does not match the code_challenge (PKCE S256)');
  const tenant = await activeTenant(client.tenantId);
  const user = await getUser(tenant.id, item.user as string);
  if (!user) throw invalidGrant('the user who authorized the client no longer exists');
  const current = scopesOf(user);
  const scopes = (item.scopes as string[]).filter((s) => isIdentityScope(s) || hasScope(current, s));
  const redeemed = (sessionId: string): TxItem[] => [
    {
      Update: {
        TableName: tableName(),
        Key: codeKey,
        UpdateExpression: 'SET session_id = :sid, redeemed_at = :at, #ttl = :ttl',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(session_id)',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':sid': sessionId, ':at': nowIso(), ':ttl': epoch(Date.now()) + REDEEMED_CODE_SECONDS },
      },
    },
  ];
  try {
    const issuer = issuerOf(headers);
    const out = await openClientSession(
      tenant,
      { client_id: client.client_id, issuer, subject: user.email, method: 'oauth_code', scopes },
      request,
      redeemed,
    );
    if (!scopes.includes('openid')) return out;
    return { ...out, id_token: await idToken(tenant.id, issuer, client.client_id, user.email, scopes, item, out.access_token) };
  } catch (error) {
    // redeemed meanwhile by a concurrent request: this one is the second use
    if (error instanceof TxConditionFailed && (error.index === 0 || error.conflict)) {
      const now = await readItem(codeKey);
      if (now && typeof now.session_id === 'string') return refuseReusedCode(now, request);
      throw invalidGrant('unknown, used or expired authorization code');
    }
    throw error;
  }
}

// ---- the authorization endpoint (RFC 6749 §4.1.1, RFC 7636 §4.3) -----------------------------

export interface AuthorizeQuery {
  readonly response_type?: string | undefined;
  readonly client_id?: string | undefined;
  readonly redirect_uri?: string | undefined;
  readonly scope?: string | undefined;
  readonly state?: string | undefined;
  readonly code_challenge?: string | undefined;
  readonly code_challenge_method?: string | undefined;
  readonly nonce?: string | undefined;
  readonly ticket?: string | undefined;
  readonly decision?: string | undefined;
}

/** What the authorization endpoint answers: a redirect to the client, the sign-in page, or the consent page. */
type AuthorizeOutcome =
  | { readonly kind: 'redirect'; readonly location: string }
  | { readonly kind: 'sign_in'; readonly account: string }
  | {
      readonly kind: 'consent';
      readonly client: string;
      readonly user: string;
      readonly scopes: string[];
      readonly ticket: string;
      readonly params: Record<string, string>;
    };

function redirectTo(uri: string, params: Record<string, string | undefined>): AuthorizeOutcome {
  const url = new URL(uri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return { kind: 'redirect', location: url.href };
}

export async function authorize(q: AuthorizeQuery, headers: Readonly<Record<string, string>>, request: RequestFacts): Promise<AuthorizeOutcome> {
  // the client_id names the account (lib/federation/clients.ts): the client, the person's
  // session, the consent, the ticket and the code (OAUTHTICKET#, OAUTHCODE#: lookup items with
  // the account's owner mark) in that account's tenant session (lib/routes.ts
  // SELF_IDENTIFYING_TENANT_ROUTES); a sign-in cookie of another account is no person of it
  const account = clientAccountOf(q.client_id);
  if (account) identifyTenant(account);
  // before the redirect URI is known to be the client's, errors are shown, never redirected (RFC 6749 §4.1.2.1)
  const client = q.client_id ? await clientByClientId(q.client_id) : undefined;
  if (!client) throw badRequest('unknown client_id: use the client_id of a client registered at /api/v1/oidc/clients');
  if (!q.redirect_uri || !client.redirect_uris.includes(q.redirect_uri)) {
    throw badRequest('redirect_uri must be given and equal one of the client\u2019s registered redirect URIs exactly');
  }
  const iss = issuerOf(headers);
  const fail = (error: string, description: string) => redirectTo(q.redirect_uri!, { error, error_description: description, state: q.state, iss });
  if (q.response_type !== 'code') return fail('unsupported_response_type', 'response_type must be code');
  if (!client.grant_types.includes('authorization_code')) return fail('unauthorized_client', 'the client is not registered for authorization_code');
  if (q.code_challenge_method !== 'S256' || !q.code_challenge || !/^[A-Za-z0-9_-]{43}$/.test(q.code_challenge)) {
    return fail('invalid_request', 'PKCE is required: code_challenge (43 characters, base64url SHA-256) with code_challenge_method=S256');
  }
  let requested: string[];
  try {
    requested = clientScopes(client, scopeList(q.scope), true);
  } catch (error) {
    return fail('invalid_scope', (error as Error).message);
  }
  const tenant = await getTenant(client.tenantId);
  if (!tenant || tenant.status !== 'active') return fail('access_denied', 'the account is not active');

  // the person: the sign-in session the browser holds (lib/auth/authorization-server.ts), of the client's account
  const cookie = sessionFromCookie(headers);
  const verdict = cookie ? await checkAccessToken(cookie).catch(() => undefined) : undefined;
  if (!verdict?.ok || verdict.claims.tenantId !== tenant.id || verdict.claims.tokenId === undefined) return { kind: 'sign_in', account: tenant.id };
  const user = await getUser(tenant.id, verdict.claims.subject);
  if (!user) return { kind: 'sign_in', account: tenant.id };
  const held = scopesOf(user);
  const scopes = requested.filter((s) => isIdentityScope(s) || hasScope(held, s));
  if (scopes.length === 0) return fail('access_denied', 'you hold none of the requested scopes');

  const params = {
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: q.redirect_uri,
    scope: requested.join(' '),
    code_challenge: q.code_challenge,
    code_challenge_method: 'S256',
    ...(q.state !== undefined ? { state: q.state } : {}),
    ...(q.nonce !== undefined ? { nonce: q.nonce } : {}),
  };
  const consentKey = keys.oauthConsent(tenant.id, client.id, user.email);
  const sessionId = verdict.claims.tokenId;
  const issue = async () => {
    // OIDC Core §2 auth_time: when the person signed in, the browser session's start
    const signedIn = scopes.includes('openid') ? ((await readItem(keys.session(tenant.id, sessionId)))?.created_at as string | undefined) : undefined;
    const oidc = { nonce: q.nonce, auth_time: signedIn ? epoch(Date.parse(signedIn)) : undefined };
    return redirectTo(q.redirect_uri!, {
      code: await newCode(client, user.email, q.code_challenge!, q.redirect_uri!, scopes, oidc),
      state: q.state,
      iss,
    });
  };

  if (q.ticket !== undefined) {
    const ticket = await spend(keys.oauthTicket(sha256(q.ticket)));
    const same =
      ticket && (ticket.expires_at as string) > nowIso() && ticket.binding === sha256(JSON.stringify([verdict.claims.tokenId, user.email, params]));
    if (!same) throw badRequest('the consent form expired or was already used: start the authorization again');
    if (q.decision !== 'allow') return fail('access_denied', 'the person declined');
    await recordConsent(tenant, client, user.email, verdict.claims.tokenId, scopes, consentKey, request);
    return issue();
  }
  const consent = await readItem(consentKey);
  const given = (consent?.scopes as string[] | undefined) ?? [];
  if (scopes.every((s) => given.includes(s))) return issue();
  const ticket = randomBytes(32).toString('base64url');
  await putConsentTicket(sha256(ticket), {
    binding: sha256(JSON.stringify([verdict.claims.tokenId, user.email, params])),
    expires_at: new Date(Date.now() + TICKET_SECONDS * 1000).toISOString(),
    ttl: epoch(Date.now()) + TICKET_SECONDS,
  });
  return { kind: 'consent', client: client.name, user: user.email, scopes, ticket, params };
}

async function newCode(
  client: Client,
  user: string,
  challenge: string,
  redirectUri: string,
  scopes: string[],
  oidc: { nonce?: string | undefined; auth_time?: number | undefined },
): Promise<string> {
  const code = randomBytes(32).toString('base64url');
  await putAuthorizationCode(sha256(code), {
    tenant_id: client.tenantId,
    client_id: client.client_id,
    user,
    scopes,
    code_challenge: challenge,
    redirect_uri: redirectUri,
    ...(oidc.nonce !== undefined ? { nonce: oidc.nonce } : {}),
    ...(oidc.auth_time !== undefined ? { auth_time: oidc.auth_time } : {}),
    expires_at: new Date(Date.now() + CODE_SECONDS * 1000).toISOString(),
    ttl: epoch(Date.now()) + CODE_SECONDS,
  });
  return code;
}

/** The person's consent to the client for these scopes (added to what they consented to before), with its audit entry. */
async function recordConsent(
  tenant: Tenant,
  client: Client,
  email: string,
  sessionId: string,
  scopes: string[],
  key: { pk: string; sk: string },
  request: RequestFacts,
): Promise<void> {
  const before = ((await readItem(key))?.scopes as string[] | undefined) ?? [];
  const all = [...new Set([...before, ...scopes])];
  const principal: Principal = { kind: 'user_token', tenantId: tenant.id, tenant, id: sessionId, user: email, scopes: [], operator: false };
  await commit(
    { principal, ...request },
    tenant.id,
    [{ Put: { TableName: tableName(), Item: { ...key, id: newId(), client_id: client.client_id, user: email, scopes: all, updated_at: nowIso() } } }],
    { action: 'oauth.consent', resource: { type: 'oidc_client', id: client.id, name: client.name }, detail: { scopes } },
  );
}

// ---- OpenID Connect: the ID token (OIDC Core §2, §3.1.3.6) ----------------------------------

/**
 * The ID token of an authorization code redeemed with `openid`: signed by the account's
 * token-signing key (in the authorization server's set, the discovery `jwks_uri`), `iss` the
 * discovery issuer, `aud` and `azp` the client, the person's `sub` (as in the access token
 * and at userinfo), the request's `nonce`, `auth_time` and `at_hash` of the access token.
 */
async function idToken(
  tenantId: string,
  issuer: string,
  clientId: string,
  subject: string,
  _scopes: readonly string[],
  code: Record<string, unknown>,
  accessToken: string,
): Promise<string> {
  const now = epoch(Date.now());
  const digest = createHash('sha256').update(accessToken, 'ascii').digest();
  return signWithTokenKey(tenantId, {
    iss: issuer,
    sub: subject,
    aud: clientId,
    azp: clientId,
    iat: now,
    exp: now + ID_TOKEN_SECONDS,
    at_hash: digest.subarray(0, digest.length / 2).toString('base64url'),
    ...(typeof code.auth_time === 'number' ? { auth_time: code.auth_time } : {}),
    ...(typeof code.nonce === 'string' ? { nonce: code.nonce } : {}),
  });
}

// ---- userinfo (OIDC Core §5.3) ----------------------------------------------------------------

/** RFC 6750 §3.1: an unusable access token at a protected resource of the authorization server. */
const invalidToken = (message: string) =>
  new HttpError(401, 'invalid_token', message, { headers: { 'WWW-Authenticate': `Bearer error="invalid_token", error_description="${message}"` } });

/** The bearer token of a userinfo request: the Authorization header (RFC 6750 §2.1) or, on POST, the form's access_token (§2.2), not both. */
export function bearerOf(headers: Readonly<Record<string, string>>, form?: string): string {
  const m = /^bearer +([\x21-\x7e]+)$/i.exec(headers.authorization?.trim() ?? '');
  if (m && form !== undefined)
    throw badRequest('send the access token once: the Authorization header or the access_token field', undefined, 'invalid_request');
  const token = m?.[1] ?? form;
  if (!token)
    throw new HttpError(401, 'invalid_token', 'an access token is required (Authorization: Bearer)', { headers: { 'WWW-Authenticate': 'Bearer' } });
  return token;
}

/**
 * The claims about the person an access token with `openid` was issued for: `sub` (the same
 * as the ID token's), and with `email` their e-mail (verified when an identity provider
 * vouched for it: an SSO user's). Top-level JSON, RFC 6750 errors.
 */
export async function userinfo(token: string): Promise<Record<string, unknown>> {
  const verdict = await checkAccessToken(token).catch(() => undefined);
  if (!verdict?.ok) throw invalidToken('the access token is invalid, expired or revoked');
  const { claims } = verdict;
  if (!claims.scopes.includes('openid'))
    throw new HttpError(403, 'insufficient_scope', 'the access token was not issued for openid', {
      headers: { 'WWW-Authenticate': 'Bearer error="insufficient_scope", scope="openid"' },
    });
  const user = await getUser(claims.tenantId, claims.subject);
  if (!user) throw invalidToken('the person the access token was issued for no longer exists');
  return {
    sub: claims.subject,
    ...(claims.scopes.includes('email') ? { email: user.email, email_verified: user.source === 'sso' } : {}),
  };
}

// ---- introspection (RFC 7662) and revocation (RFC 7009) ----------------------------------------

interface IntrospectionRequest extends ClientCredentials {
  readonly token: string;
  readonly token_type_hint?: string | undefined;
}

/** A client that may call introspection: an authenticated confidential client (a public one is refused, RFC 7662 §2.1). */
async function confidentialClient(body: ClientCredentials, headers: Readonly<Record<string, string>>, request: RequestFacts): Promise<Client> {
  const client = await authenticateClient(body, headers, request);
  if (client.token_endpoint_auth_method === 'none')
    throw invalidClient('introspection needs client authentication: a public client cannot call it', true);
  return client;
}

/**
 * RFC 7662 §2.2: whether a token of the client's account is active, and what it is. Anything
 * else (unknown, expired, revoked, another account's, a used refresh token) is only
 * `{"active": false}`: the answer never tells why.
 */
export async function introspect(body: IntrospectionRequest, headers: Readonly<Record<string, string>>, request: RequestFacts) {
  // the client's account: its client and the tokens of its sessions in its tenant session; a
  // token of another account is of no session there (lib/users/sessions.ts sessionOfToken): inactive
  const account = clientAccountOf(presentedClientId(body, headers));
  if (account) identifyTenant(account);
  const client = await confidentialClient(body, headers, request);
  const inactive = { active: false } as const;
  const found = await sessionOfToken(body.token);
  const session = found?.session;
  if (found?.refreshUsed !== undefined) {
    // a refresh token: its session's grant, while the token is the family's current one
    if (!session || found.tenantId !== client.tenantId || found.refreshUsed || session.status !== 'active' || session.expires_at <= nowIso())
      return inactive;
    return {
      active: true,
      token_type: 'refresh_token',
      scope: (session.scopes ?? []).join(' '),
      ...(session.client_id ? { client_id: session.client_id } : {}),
      sub: session.user,
      exp: epoch(Date.parse(session.expires_at)),
      iss: session.issuer ?? issuerOf(headers),
    };
  }
  const verdict = await checkAccessToken(body.token).catch(() => undefined);
  if (!verdict?.ok || verdict.claims.tenantId !== client.tenantId) return inactive;
  const claims = decodeJwt(body.token);
  return {
    active: true,
    token_type: 'Bearer',
    scope: verdict.claims.scopes.join(' '),
    ...(verdict.claims.clientId ? { client_id: verdict.claims.clientId } : {}),
    sub: verdict.claims.subject,
    aud: claims.aud,
    iss: claims.iss,
    exp: claims.exp,
    iat: claims.iat,
    jti: claims.jti,
  };
}

/**
 * RFC 7009 at the authorization server: with client authentication (as at the token
 * endpoint, a public client by its client_id), only a token issued to that client is revoked;
 * without it (the CLI's sessions), whoever holds a session's token may end it. 200 either way.
 */
export async function revoke(body: IntrospectionRequest, headers: Readonly<Record<string, string>>, request: RequestFacts): Promise<void> {
  const authenticates = basicCredentials(headers) !== undefined || body.client_secret !== undefined || body.client_assertion !== undefined;
  // with a client: its account, and only its tokens (another account's is of no session there);
  // without: the token names its account (a refresh item read on the function's own role, or an
  // access token), and the session ends in that account's tenant session
  const account = clientAccountOf(presentedClientId(body, headers));
  if (account) identifyTenant(account);
  const named = !authenticates && body.client_id !== undefined ? await clientByClientId(body.client_id) : undefined;
  const client = authenticates || named ? await authenticateClient(body, headers, request) : undefined;
  await revokeSessionByToken(body.token, request, client?.client_id);
}

// ---- RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0) ------------------------------

interface EndSessionQuery {
  readonly id_token_hint?: string | undefined;
  readonly client_id?: string | undefined;
  readonly post_logout_redirect_uri?: string | undefined;
  readonly state?: string | undefined;
}

const notOurIdToken = () => badRequest('id_token_hint is not an ID token this server issued');

/** The `aud` an ID token hint names (unverified), if one. */
function audienceOf(hint: string): string | undefined {
  try {
    const { aud } = decodeJwt(hint);
    const audience = Array.isArray(aud) && aud.length === 1 ? aud[0] : aud;
    return typeof audience === 'string' ? audience : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Runs `fn` in the tenant session of the account a client_id names (GET .../logout: the client
 * and its token-signing key are read there, while the request's own account is the one its
 * sign-in cookie names, whose session it ends); outside a tenant scope, or for no client, as is.
 */
function inClientAccount<T>(clientId: string | undefined, fn: () => Promise<T>): Promise<T> {
  const account = clientAccountOf(clientId);
  return account && currentScope() ? withTenant(account, fn) : fn();
}

/**
 * RP-Initiated Logout 1.0 §2: the client an `id_token_hint` names, once it is shown to be an
 * ID token of this server: its `aud` a registered client (`<account id>.<client id>`), its
 * signature by a token-signing key of that client's account (the discovery `jwks_uri`'s),
 * `typ` JWT (an access token is not a hint), `iss` this issuer. An expired ID token is still a
 * hint (the specification asks the OP to accept one), so the lifetime is not checked.
 */
async function idTokenHintClient(hint: string, headers: Readonly<Record<string, string>>): Promise<string> {
  let kid: unknown;
  let aud: unknown;
  try {
    ({ kid } = decodeProtectedHeader(hint));
    ({ aud } = decodeJwt(hint));
  } catch {
    throw notOurIdToken();
  }
  const audience = Array.isArray(aud) && aud.length === 1 ? aud[0] : aud;
  if (typeof kid !== 'string' || typeof audience !== 'string') throw notOurIdToken();
  const client = await clientByClientId(audience);
  const key = client ? await tokenKeyOf(client.tenantId, kid) : undefined;
  if (!key) throw notOurIdToken();
  try {
    const { payload, protectedHeader } = await compactVerify(hint, await importJWK(key, 'ES256'), { algorithms: ['ES256'] });
    const claims = JSON.parse(new TextDecoder().decode(payload)) as Record<string, unknown>;
    if (protectedHeader.typ !== 'JWT' || claims.iss !== issuerOf(headers) || typeof claims.sub !== 'string') throw notOurIdToken();
  } catch {
    throw notOurIdToken();
  }
  return audience;
}

/**
 * Ends the browser's sign-in session (the `sc_session` cookie's) and sends the person back to
 * the client when it asks to: `post_logout_redirect_uri` must be one of the redirect URIs
 * registered for the client named by client_id or the ID token's `aud` (never an open
 * redirect). Without a redirect, a page that says the person is signed out.
 */
export async function endSession(
  q: EndSessionQuery,
  headers: Readonly<Record<string, string>>,
  request: RequestFacts,
): Promise<{ kind: 'redirect'; location: string } | { kind: 'signed_out' }> {
  let clientId = q.client_id;
  if (q.id_token_hint !== undefined) {
    const hint = q.id_token_hint;
    const hinted = await inClientAccount(audienceOf(hint), () => idTokenHintClient(hint, headers));
    if (clientId !== undefined && clientId !== hinted) throw badRequest('id_token_hint was issued to another client than client_id');
    clientId = hinted;
  }
  let location: string | undefined;
  if (q.post_logout_redirect_uri !== undefined) {
    const named = clientId;
    const client = named ? await inClientAccount(named, () => clientByClientId(named)) : undefined;
    if (!client || !client.redirect_uris.includes(q.post_logout_redirect_uri))
      throw badRequest('post_logout_redirect_uri must equal a redirect URI registered for the client (named by client_id or id_token_hint)');
    const url = new URL(q.post_logout_redirect_uri);
    if (q.state !== undefined) url.searchParams.set('state', q.state);
    location = url.href;
  }
  const cookie = sessionFromCookie(headers);
  const verdict = cookie ? await checkAccessToken(cookie).catch(() => undefined) : undefined;
  if (verdict?.ok) await endBrowserSession(verdict.claims.tenantId, verdict.claims.tokenId, request, 'sign_out');
  return location ? { kind: 'redirect', location } : { kind: 'signed_out' };
}

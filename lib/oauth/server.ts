import { createHash, randomBytes } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { createLocalJWKSet, decodeJwt, jwtVerify, type JSONWebKeySet } from 'jose';
import { commit } from '../audit/audit.js';
import { checkAccessToken } from '../auth/jwt.js';
import type { CallContext, Principal } from '../auth/principal.js';
import { hasScope } from '../auth/scopes.js';
import { clientByClientId, clientSecretMatches } from '../federation/clients.js';
import { getJwks } from '../federation/jwks.js';
import { badRequest, HttpError } from '../core/errors.js';
import { newId, nowIso } from '../ids.js';
import { KNOWN_SCOPES } from '../routes.js';
import { db, tableName } from '../store/client.js';
import { readItem } from '../resources/items.js';
import { keys } from '../store/keys.js';
import { getTenant, type Tenant } from '../store/tenants.js';
import { TxConditionFailed, type TxItem } from '../store/tx.js';
import { endSession, openClientSession, refreshSession, type GrantTokens, type RequestFacts } from '../users/sessions.js';
import { spend } from '../users/single-use.js';
import { getUser, scopesOf } from '../users/users.js';
import { issuerOf, sessionFromCookie, tokenEndpointOf } from './base.js';

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
    jwks_uri: `${issuerOf(headers)}/jwks`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['ES256'],
    scopes_supported: [...KNOWN_SCOPES],
    token_endpoint_auth_methods_supported: [...AUTH_METHODS],
    token_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGS,
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
  };
}

/** The scopes a request names (space-separated), each once; undefined when none are named. */
const scopeList = (scope: string | undefined) => (scope === undefined || scope.trim() === '' ? undefined : [...new Set(scope.trim().split(/ +/))]);

/** The requested scopes, checked against what the client may ask for and what the service knows; the client's own scopes when none is named. */
function clientScopes(client: Client, requested: string[] | undefined): string[] {
  const allowed = client.scopes.filter((s) => KNOWN_SCOPES.includes(s));
  if (!requested) return allowed;
  const refused = requested.filter((s) => !allowed.includes(s));
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

interface TokenRequest {
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
async function authenticateClient(body: TokenRequest, headers: Readonly<Record<string, string>>, ctx: RequestFacts): Promise<Client> {
  const basic = basicCredentials(headers);
  const methods = [basic, body.client_secret, body.client_assertion].filter((m) => m !== undefined);
  if (methods.length > 1) throw badRequest('use exactly one client authentication method', undefined, 'invalid_request');
  if (basic) return secretClient(basic.id, basic.secret, 'client_secret_basic', body.client_id, true);
  if (body.client_secret !== undefined) return secretClient(body.client_id ?? '', body.client_secret, 'client_secret_post', body.client_id, false);
  if (body.client_assertion !== undefined) return assertionClient(body, headers, ctx);
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

async function assertionClient(body: TokenRequest, headers: Readonly<Record<string, string>>, request: RequestFacts): Promise<Client> {
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
  try {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.jwtReplay(client.tenantId, sha256(`${id}\n${String(payload.jti)}`)), ttl: (payload.exp ?? 0) + 60 },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  } catch (error) {
    if ((error as { name?: string }).name === 'ConditionalCheckFailedException') throw invalidClient('client assertion already used (jti)', false);
    throw error;
  }
  return client;
}

// ---- the token endpoint (RFC 6749 §4.1.3, §4.4, §6) -----------------------------------------

type TokenAnswer = Omit<GrantTokens, 'session_id'>;

export async function token(body: TokenRequest, headers: Readonly<Record<string, string>>, request: RequestFacts): Promise<TokenAnswer> {
  const client = await authenticateClient(body, headers, request);
  const needs = (grant: string) => {
    if (!client.grant_types.includes(grant)) throw badRequest(`the client is not registered for ${grant}`, undefined, 'unauthorized_client');
  };
  switch (body.grant_type) {
    case 'authorization_code':
      needs('authorization_code');
      return redeemCode(client, body, request);
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
      const grant = { client_id: client.client_id, subject: `client:${client.client_id}`, method: 'client_credentials' as const, scopes };
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
  await endSession(item.tenant_id as string, item.session_id as string, request, 'authorization_code_reuse');
  throw codeReused();
}

/**
 * A code is redeemed once: the session it opens is recorded on the code item in the same
 * transaction (conditional on no session being recorded yet), and the item is kept as long as
 * that session may live, so a second presentation, however late, finds the session to revoke.
 */
async function redeemCode(client: Client, body: TokenRequest, request: RequestFacts): Promise<TokenAnswer> {
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
  const scopes = (item.scopes as string[]).filter((s) => hasScope(current, s));
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
    return await openClientSession(tenant, { client_id: client.client_id, subject: user.email, method: 'oauth_code', scopes }, request, redeemed);
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
    requested = clientScopes(client, scopeList(q.scope));
  } catch (error) {
    return fail('invalid_scope', (error as Error).message);
  }
  const tenant = await getTenant(client.tenantId);
  if (!tenant || tenant.status !== 'active') return fail('access_denied', 'the account is not active');

  // the person: the sign-in session the browser holds (lib/oauth/base.ts), of the client's account
  const cookie = sessionFromCookie(headers);
  const verdict = cookie ? await checkAccessToken(cookie).catch(() => undefined) : undefined;
  if (!verdict?.ok || verdict.claims.tenantId !== tenant.id || verdict.claims.tokenId === undefined) return { kind: 'sign_in', account: tenant.id };
  const user = await getUser(tenant.id, verdict.claims.subject);
  if (!user) return { kind: 'sign_in', account: tenant.id };
  const held = scopesOf(user);
  const scopes = requested.filter((s) => hasScope(held, s));
  if (scopes.length === 0) return fail('access_denied', 'you hold none of the requested scopes');

  const params = {
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: q.redirect_uri,
    scope: requested.join(' '),
    code_challenge: q.code_challenge,
    code_challenge_method: 'S256',
    ...(q.state !== undefined ? { state: q.state } : {}),
  };
  const consentKey = keys.oauthConsent(tenant.id, client.id, user.email);
  const issue = async () =>
    redirectTo(q.redirect_uri!, { code: await newCode(client, user.email, q.code_challenge!, q.redirect_uri!, scopes), state: q.state, iss });

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
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...keys.oauthTicket(sha256(ticket)),
        binding: sha256(JSON.stringify([verdict.claims.tokenId, user.email, params])),
        expires_at: new Date(Date.now() + TICKET_SECONDS * 1000).toISOString(),
        ttl: epoch(Date.now()) + TICKET_SECONDS,
      },
    }),
  );
  return { kind: 'consent', client: client.name, user: user.email, scopes, ticket, params };
}

async function newCode(client: Client, user: string, challenge: string, redirectUri: string, scopes: string[]): Promise<string> {
  const code = randomBytes(32).toString('base64url');
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...keys.oauthCode(sha256(code)),
        tenant_id: client.tenantId,
        client_id: client.client_id,
        user,
        scopes,
        code_challenge: challenge,
        redirect_uri: redirectUri,
        expires_at: new Date(Date.now() + CODE_SECONDS * 1000).toISOString(),
        ttl: epoch(Date.now()) + CODE_SECONDS,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
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

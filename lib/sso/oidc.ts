import { createHash, randomBytes } from 'node:crypto';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';
import { open, seal } from '../crypto/envelope.js';
import { conflict, forbidden, HttpError, notFound, unauthorized } from '../core/errors.js';
import { nowIso } from '../ids.js';
import { accountSettings } from '../settings/settings.js';
import { keys } from '../store/keys.js';
import { getTenant, type Tenant } from '../store/tenants.js';
import { openSession, type RequestFacts, type SessionTokens } from '../users/sessions.js';
import { peek, spend } from '../users/single-use.js';
import { identifyTenant } from '../tenancy/scope.js';
import { bindUserIdentity, putSsoUser } from '../users/store.js';
import { getUser, type User } from '../users/users.js';
import { getSsoConfig, secretScope, type SsoConfig } from './config.js';
import { OutboundFailed } from '../events/outbound.js';
import { idpJson } from './http.js';
import { putOidcState } from './store.js';
import { publicBase, sessionFromCookie } from '../auth/authorization-server.js';
import { checkAccessToken } from '../auth/jwt.js';

/**
 * Sign-in through the account's OpenID Connect provider: authorization code with PKCE
 * (S256), `state` and `nonce`. The state is a single-use item (only its hash is the key;
 * the PKCE verifier inside is sealed) that lives ten minutes; the callback spends it before
 * anything else, exchanges the code, validates the ID token fully with jose against the
 * provider's JWK set (signature, issuer, audience, expiry, nonce, authorized party), maps
 * the user's claims to scopes and opens a session. Every request to the provider goes
 * through the SSRF guard (lib/sso/http.ts).
 */
const STATE_SECONDS = 600;
const ID_TOKEN_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
const hash = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const stateScope = (tenantId: string, stateHash: string) => ({ tenantId, type: 'oidc_state', id: stateHash, version: 1 });

interface Discovery {
  readonly authorization_endpoint: string;
  readonly token_endpoint: string;
  readonly jwks_uri: string;
  readonly userinfo_endpoint?: string;
}

/** OpenID Connect Discovery 1.0 §4: the issuer with any terminating `/` removed, then the well-known suffix; the issuer itself stays as configured. */
const discoveryUrl = (issuer: string): string => `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;

const guardOf = (tenant: Tenant) => ({ allowLoopback: accountSettings(tenant).webhooks.allow_loopback });
const idpFailed = (what: string, error?: unknown) =>
  new HttpError(502, 'idp_failed', `the identity provider ${what}${error instanceof OutboundFailed ? `: ${error.message}` : ''}`, {
    expose: true,
    cause: error,
  });

async function discover(cfg: SsoConfig, tenant: Tenant): Promise<Discovery> {
  let doc: Record<string, unknown>;
  try {
    const res = await idpJson(discoveryUrl(cfg.issuer), guardOf(tenant));
    if (res.status !== 200) throw new OutboundFailed(`HTTP ${res.status}`);
    doc = res.json as Record<string, unknown>;
  } catch (error) {
    throw idpFailed('discovery document could not be read', error);
  }
  // OpenID Connect Discovery 1.0 §4.3: the issuer in the document is exactly the configured one
  if (doc.issuer !== cfg.issuer) throw idpFailed('discovery document names another issuer');
  for (const k of ['authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const) {
    if (typeof doc[k] !== 'string') throw idpFailed(`discovery document has no ${k}`);
  }
  if (doc.userinfo_endpoint !== undefined && typeof doc.userinfo_endpoint !== 'string')
    throw idpFailed('discovery document has a malformed userinfo_endpoint');
  return doc as unknown as Discovery;
}

async function ssoOf(tenantId: string): Promise<{ tenant: Tenant; cfg: SsoConfig }> {
  const [tenant, cfg] = await Promise.all([getTenant(tenantId), getSsoConfig(tenantId)]);
  if (!tenant || !cfg) throw notFound('single sign-on configuration');
  if (tenant.status !== 'active') throw forbidden('account is suspended', 'tenant_suspended');
  return { tenant, cfg };
}

/** Where the provider sends the browser back: PUBLIC_BASE_URL (always set in AWS), else this request's host. */
export const callbackUrl = (headers: Readonly<Record<string, string>>): string => `${publicBase(headers)}/api/v1/auth/oidc/callback`;

/** Who asks to link: the person signed in to the account in this browser (its sign-in session), by e-mail and session. */
export interface Linking {
  readonly email: string;
  readonly sessionId: string;
}

/**
 * The signed-in person of the account in this browser: the `sc_session` cookie's token, a
 * sign-in session of a user of `tenantId` (not an OAuth client's token); undefined otherwise.
 */
async function signedInPerson(tenantId: string, headers: Readonly<Record<string, string>>): Promise<Linking | undefined> {
  const cookie = sessionFromCookie(headers);
  const verdict = cookie ? await checkAccessToken(cookie).catch(() => undefined) : undefined;
  if (!verdict?.ok || verdict.claims.tenantId !== tenantId || verdict.claims.clientId !== undefined) return undefined;
  const user = await getUser(tenantId, verdict.claims.subject);
  return user ? { email: user.email, sessionId: verdict.claims.tokenId } : undefined;
}

/** `link`: the explicit linking step (linkIdentity below) starts only from a signed-in person of the account. */
export async function linkingPerson(tenantId: string, headers: Readonly<Record<string, string>>): Promise<Linking> {
  // the request names the account (a tenant route, lib/routes.ts SELF_IDENTIFYING_TENANT_ROUTES): a
  // cookie of another account fails in its check (a second account is refused), as unknown
  identifyTenant(tenantId);
  const person = await signedInPerson(tenantId, headers);
  if (!person)
    throw unauthorized(
      'linking an identity of single sign-on needs the sign-in session of a user of this account (sign in first)',
      'sign_in_required',
    );
  return person;
}

/** Starts a sign-in (or, with `link`, the linking of the provider's identity to the signed-in person): the provider's authorization URL. */
export async function startLogin(tenantId: string, redirectUri: string, link?: Linking): Promise<{ url: string; expires_at: string }> {
  // the request names the account: its SSO configuration, the state naming it (with its owner
  // mark, OIDCSTATE# is a lookup prefix) and its seal in that account's tenant session
  identifyTenant(tenantId);
  const { tenant, cfg } = await ssoOf(tenantId);
  const idp = await discover(cfg, tenant);
  const state = randomBytes(32).toString('base64url');
  const nonce = randomBytes(32).toString('base64url');
  const verifier = randomBytes(32).toString('base64url');
  const stateHash = hash(state);
  const expiresAt = new Date(Date.now() + STATE_SECONDS * 1000).toISOString();
  await putOidcState(stateHash, {
    tenant_id: tenantId,
    nonce_hash: hash(nonce),
    code_verifier: await seal(stateScope(tenantId, stateHash), verifier),
    redirect_uri: redirectUri,
    ...(link ? { link_email: link.email, link_session: link.sessionId } : {}),
    created_at: nowIso(),
    expires_at: expiresAt,
    ttl: Math.floor(Date.parse(expiresAt) / 1000),
  });
  const url = new URL(idp.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: cfg.client_id,
    redirect_uri: redirectUri,
    scope: 'openid email profile',
    state,
    nonce,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString();
  return { url: url.toString(), expires_at: expiresAt };
}

const refused = (why: string) => unauthorized(`single sign-on refused: ${why}`, 'sign_in_failed');

/** Spends the state (single use): a replayed, unknown or expired state is refused. */
async function spendState(state: string) {
  const stateHash = hash(state);
  // the state names the account (written in its session by the login, with its owner mark: one
  // naming another account is dropped at the read), read on the function's own role; the spend
  // and everything after it (the SSO secret, the user, the session) in that account's session
  const seen = await peek(keys.oidcState(stateHash));
  if (!seen || typeof seen.tenant_id !== 'string' || !seen.tenant_id) throw refused('unknown, used or expired state');
  identifyTenant(seen.tenant_id);
  const item = await spend(keys.oidcState(stateHash));
  if (!item || item.tenant_id !== seen.tenant_id || Date.parse(String(item.expires_at)) <= Date.now())
    throw refused('unknown, used or expired state');
  const tenantId = item.tenant_id as string;
  return {
    tenantId,
    nonceHash: item.nonce_hash as string,
    redirectUri: item.redirect_uri as string,
    link: typeof item.link_email === 'string' ? { email: item.link_email, sessionId: String(item.link_session) } : undefined,
    verifier: (await open(stateScope(tenantId, stateHash), item.code_verifier as Uint8Array)).toString('utf8'),
  };
}

async function exchange(
  cfg: SsoConfig,
  tenant: Tenant,
  idp: Discovery,
  code: string,
  redirectUri: string,
  verifier: string,
): Promise<{ idToken: string; accessToken?: string }> {
  const secret = (await open(secretScope(tenant.id, cfg.client_id), cfg.client_secret)).toString('utf8');
  // RFC 6749 §2.3.1: client_secret_basic, both parts form-urlencoded
  const basic = Buffer.from(`${encodeURIComponent(cfg.client_id)}:${encodeURIComponent(secret)}`).toString('base64');
  let res: { status: number; json: unknown };
  try {
    res = await idpJson(idp.token_endpoint, guardOf(tenant), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}` },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier }).toString(),
    });
  } catch (error) {
    throw idpFailed('token endpoint failed', error);
  }
  const { id_token: idToken, access_token: accessToken } = res.json as { id_token?: unknown; access_token?: unknown };
  if (res.status !== 200 || typeof idToken !== 'string') throw refused(`the token endpoint answered HTTP ${res.status} without an ID token`);
  return { idToken, ...(typeof accessToken === 'string' ? { accessToken } : {}) };
}

/** ID token claims userinfo never supplies (they are the token's own: OIDC Core §2, RFC 7519 §4.1). */
const REGISTERED = new Set(['iss', 'aud', 'exp', 'iat', 'nbf', 'jti', 'nonce', 'azp', 'auth_time', 'at_hash', 'c_hash', 'acr', 'amr', 'sid']);

/** The claims the service reads about the person (OpenID Connect Core §5.4 `email` scope). */
const PERSON_CLAIMS = ['email', 'email_verified'] as const;

/**
 * OpenID Connect Core §5.4, §5.3: a provider with the specification's defaults puts the
 * `email` scope's claims in the userinfo response only, not in an ID token issued with an
 * access token. When the validated ID token lacks them, they are read from the provider's
 * userinfo endpoint with the access token; the response's `sub` must equal the ID token's
 * (§5.3.4, else it is refused) and only its person claims join the ID token's, never
 * replacing one the ID token carries. The mapped claims (claim_mappings) may come from either.
 */
async function withUserinfo(tenant: Tenant, idp: Discovery, claims: JWTPayload, accessToken: string | undefined): Promise<JWTPayload> {
  if (PERSON_CLAIMS.every((c) => claims[c] !== undefined)) return claims;
  if (!idp.userinfo_endpoint || !accessToken) return claims;
  let res: { status: number; json: unknown };
  try {
    res = await idpJson(idp.userinfo_endpoint, guardOf(tenant), { headers: { authorization: `Bearer ${accessToken}` } });
  } catch (error) {
    throw idpFailed('userinfo endpoint failed', error);
  }
  const info = res.json as Record<string, unknown> | null;
  if (res.status !== 200 || typeof info !== 'object' || info === null || Array.isArray(info))
    throw idpFailed(`userinfo endpoint answered HTTP ${res.status}`);
  if (info.sub !== claims.sub) throw refused('the userinfo response is about another subject than the ID token');
  const added = Object.fromEntries(Object.entries(info).filter(([k]) => k !== 'sub' && !Object.hasOwn(claims, k) && !REGISTERED.has(k)));
  return { ...claims, ...added };
}

async function validateIdToken(cfg: SsoConfig, tenant: Tenant, idp: Discovery, idToken: string, nonceHash: string): Promise<JWTPayload> {
  let jwks: JSONWebKeySet;
  try {
    const res = await idpJson(idp.jwks_uri, guardOf(tenant));
    if (res.status !== 200) throw new OutboundFailed(`HTTP ${res.status}`);
    jwks = res.json as JSONWebKeySet;
  } catch (error) {
    throw idpFailed('JWK set could not be read', error);
  }
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(idToken, createLocalJWKSet(jwks), {
      issuer: cfg.issuer,
      audience: cfg.client_id,
      algorithms: ID_TOKEN_ALGS,
      requiredClaims: ['exp', 'iat', 'sub', 'nonce'],
      clockTolerance: 30,
    }));
  } catch (error) {
    throw refused(`the ID token did not validate (${(error as { code?: string }).code ?? 'invalid'})`);
  }
  if (typeof payload.nonce !== 'string' || hash(payload.nonce) !== nonceHash) throw refused('the ID token\u2019s nonce is not this sign-in\u2019s');
  // OpenID Connect Core §3.1.3.7: several audiences need azp = the client
  if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== cfg.client_id)
    throw refused('the ID token\u2019s authorized party is another client');
  return payload;
}

function mappedScopes(cfg: SsoConfig, claims: JWTPayload): string[] {
  const scopes = new Set(cfg.default_scopes);
  for (const m of cfg.claim_mappings) {
    const v = claims[m.claim];
    if (v === m.value || (Array.isArray(v) && v.includes(m.value))) for (const s of m.scopes) scopes.add(s);
  }
  return [...scopes];
}

/**
 * The user for verified claims: an SSO user of this identity (same issuer and subject), or a
 * new SSO user with the mapped scopes. The provider must vouch for the e-mail address
 * (`email_verified: true`; absent is not a yes). An e-mail address alone never binds a
 * sign-in to a user this identity did not create: a user who signs in without single
 * sign-on (the account's admin, with a password or a passkey) or an SSO user of another
 * identity is refused (409 `sso_identity_conflict`), never taken over.
 */
async function userFor(cfg: SsoConfig, tenant: Tenant, claims: JWTPayload): Promise<User> {
  const email = typeof claims.email === 'string' ? claims.email.toLowerCase() : undefined;
  if (!email || claims.email_verified !== true)
    throw forbidden('the identity provider vouches for no verified e-mail address (email_verified must be true)');
  const domain = email.split('@')[1] ?? '';
  if (!cfg.allowed_domains.includes(domain)) throw forbidden(`e-mail domain ${domain} is not admitted by this account\u2019s single sign-on`);
  const existing = await getUser(tenant.id, email);
  // a user who signs in otherwise and linked this very identity by the explicit step (linkIdentity): signs in as that user, its scopes its own
  if (existing && existing.source !== 'sso' && existing.issuer === cfg.issuer && existing.subject === claims.sub) return existing;
  if (existing && existing.source !== 'sso')
    throw conflict(
      `${email} is a user of this account who signs in without single sign-on (password or passkey); single sign-on never takes over an existing user by e-mail address. Sign in as that user with its password or passkey (and link this identity from there: GET /api/v1/auth/oidc/login?tenant_id=…&link=true), or sign in through the identity provider with another e-mail address`,
      'sso_identity_conflict',
    );
  if (existing && (existing.issuer !== cfg.issuer || existing.subject !== claims.sub))
    throw conflict(
      `${email} was created by another identity of single sign-on (another issuer or subject); an e-mail address alone never moves it to this one: sign in with the identity that created it`,
      'sso_identity_conflict',
    );
  const scopes = mappedScopes(cfg, claims);
  if (scopes.length === 0) throw forbidden('no scope is mapped to this user\u2019s claims');
  const at = nowIso();
  const user: User = existing
    ? { ...existing, scopes }
    : { email, role: 'viewer', scopes, source: 'sso', issuer: cfg.issuer, subject: claims.sub!, created_at: at, last_sign_in_at: null };
  if (!(await putSsoUser(tenant.id, email, user, existing ? { issuer: cfg.issuer, subject: claims.sub! } : undefined)))
    throw conflict(`${email} was created or changed by another sign-in at the same time: sign in again`, 'sso_identity_conflict');
  return user;
}

/**
 * The explicit, verified linking step: a user who signs in without single sign-on (the
 * account's admin) binds the provider's identity to itself. It starts from that user's own
 * sign-in session (linkingPerson) and finishes only in the same browser with the same session
 * still active; the provider must vouch for the same e-mail address (`email_verified: true`)
 * and the user must not be bound to another identity. The user keeps its source, role and
 * scopes; from then on that identity (issuer and `sub`) signs in as it (userFor). An e-mail
 * address alone never links: without this step it stays 409 `sso_identity_conflict`.
 */
async function linkIdentity(
  cfg: SsoConfig,
  tenant: Tenant,
  claims: JWTPayload,
  link: Linking,
  headers: Readonly<Record<string, string>>,
): Promise<User> {
  const now = await signedInPerson(tenant.id, headers);
  if (!now || now.sessionId !== link.sessionId || now.email !== link.email)
    throw refused('linking must finish in the browser and sign-in session that started it');
  const email = typeof claims.email === 'string' ? claims.email.toLowerCase() : undefined;
  if (!email || claims.email_verified !== true)
    throw forbidden('the identity provider vouches for no verified e-mail address (email_verified must be true)');
  if (email !== link.email)
    throw forbidden(`the identity provider vouches for ${email}, not for ${link.email}: only the signed-in user’s own address links`);
  const user = await getUser(tenant.id, email);
  if (!user) throw refused('the signed-in user no longer exists');
  if (user.source === 'sso' || (user.issuer !== undefined && (user.issuer !== cfg.issuer || user.subject !== claims.sub)))
    throw conflict(`${email} is already bound to an identity of single sign-on`, 'sso_identity_conflict');
  if (!(await bindUserIdentity(tenant.id, email, cfg.issuer, claims.sub!)))
    throw conflict(`${email} was bound to another identity meanwhile`, 'sso_identity_conflict');
  return { ...user, issuer: cfg.issuer, subject: claims.sub! };
}

/** The callback: state, code exchange, ID token validation, userinfo when the ID token lacks the person's claims, user (or the linking step), session. */
export async function finishLogin(
  code: string,
  state: string,
  request: RequestFacts,
  headers: Readonly<Record<string, string>> = {},
): Promise<SessionTokens & { email: string }> {
  const spent = await spendState(state);
  const { tenant, cfg } = await ssoOf(spent.tenantId);
  const idp = await discover(cfg, tenant);
  const { idToken, accessToken } = await exchange(cfg, tenant, idp, code, spent.redirectUri, spent.verifier);
  const claims = await withUserinfo(tenant, idp, await validateIdToken(cfg, tenant, idp, idToken, spent.nonceHash), accessToken);
  const user = spent.link ? await linkIdentity(cfg, tenant, claims, spent.link, headers) : await userFor(cfg, tenant, claims);
  return { ...(await openSession(tenant, user, 'sso', request)), email: user.email };
}

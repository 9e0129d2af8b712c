import { createHash, randomBytes } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';
import { open, seal } from '../crypto/envelope.js';
import { conflict, forbidden, HttpError, notFound, unauthorized } from '../core/errors.js';
import { nowIso } from '../ids.js';
import { accountSettings } from '../settings/settings.js';
import { db, tableName } from '../store/client.js';
import { keys } from '../store/keys.js';
import { getTenant, type Tenant } from '../store/tenants.js';
import { openSession, type RequestFacts, type SessionTokens } from '../users/sessions.js';
import { spend } from '../users/single-use.js';
import { getUser, type User } from '../users/users.js';
import { getSsoConfig, secretScope, type SsoConfig } from './config.js';
import { OutboundFailed } from '../events/outbound.js';
import { idpJson } from './http.js';
import { publicBase } from '../auth/authorization-server.js';

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
}

const guardOf = (tenant: Tenant) => ({ allowLoopback: accountSettings(tenant).webhooks.allow_loopback });
const idpFailed = (what: string, error?: unknown) =>
  new HttpError(502, 'idp_failed', `the identity provider ${what}${error instanceof OutboundFailed ? `: ${error.message}` : ''}`, {
    expose: true,
    cause: error,
  });

async function discover(cfg: SsoConfig, tenant: Tenant): Promise<Discovery> {
  let doc: Record<string, unknown>;
  try {
    const res = await idpJson(`${cfg.issuer}/.well-known/openid-configuration`, guardOf(tenant));
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

/** Starts a sign-in: the provider's authorization URL to send the browser to. */
export async function startLogin(tenantId: string, redirectUri: string): Promise<{ url: string; expires_at: string }> {
  const { tenant, cfg } = await ssoOf(tenantId);
  const idp = await discover(cfg, tenant);
  const state = randomBytes(32).toString('base64url');
  const nonce = randomBytes(32).toString('base64url');
  const verifier = randomBytes(32).toString('base64url');
  const stateHash = hash(state);
  const expiresAt = new Date(Date.now() + STATE_SECONDS * 1000).toISOString();
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...keys.oidcState(stateHash),
        tenant_id: tenantId,
        nonce_hash: hash(nonce),
        code_verifier: await seal(stateScope(tenantId, stateHash), verifier),
        redirect_uri: redirectUri,
        created_at: nowIso(),
        expires_at: expiresAt,
        ttl: Math.floor(Date.parse(expiresAt) / 1000),
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
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
  const item = await spend(keys.oidcState(stateHash));
  if (!item || Date.parse(String(item.expires_at)) <= Date.now()) throw refused('unknown, used or expired state');
  const tenantId = item.tenant_id as string;
  return {
    tenantId,
    nonceHash: item.nonce_hash as string,
    redirectUri: item.redirect_uri as string,
    verifier: (await open(stateScope(tenantId, stateHash), item.code_verifier as Uint8Array)).toString('utf8'),
  };
}

async function exchange(cfg: SsoConfig, tenant: Tenant, idp: Discovery, code: string, redirectUri: string, verifier: string): Promise<string> {
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
  const idToken = (res.json as { id_token?: unknown }).id_token;
  if (res.status !== 200 || typeof idToken !== 'string') throw refused(`the token endpoint answered HTTP ${res.status} without an ID token`);
  return idToken;
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
  if (existing && existing.source !== 'sso')
    throw conflict(
      `${email} is a user of this account who signs in without single sign-on (password or passkey); single sign-on never takes over an existing user by e-mail address. Sign in as that user with its password or passkey, or sign in through the identity provider with another e-mail address`,
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
  try {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.user(tenant.id, email), ...keys.userIndex(tenant.id, email), ...user },
        // only the user read above is replaced: a user written meanwhile (a local one, another identity's) never is
        ConditionExpression: existing ? '#src = :sso AND subject = :sub AND issuer = :iss' : 'attribute_not_exists(pk)',
        ...(existing
          ? { ExpressionAttributeNames: { '#src': 'source' }, ExpressionAttributeValues: { ':sso': 'sso', ':sub': claims.sub, ':iss': cfg.issuer } }
          : {}),
      }),
    );
  } catch (error) {
    if ((error as { name?: string }).name === 'ConditionalCheckFailedException')
      throw conflict(`${email} was created or changed by another sign-in at the same time: sign in again`, 'sso_identity_conflict');
    throw error;
  }
  return user;
}

/** The callback: state, code exchange, ID token validation, user, session. */
export async function finishLogin(code: string, state: string, request: RequestFacts): Promise<SessionTokens & { email: string }> {
  const spent = await spendState(state);
  const { tenant, cfg } = await ssoOf(spent.tenantId);
  const idp = await discover(cfg, tenant);
  const idToken = await exchange(cfg, tenant, idp, code, spent.redirectUri, spent.verifier);
  const claims = await validateIdToken(cfg, tenant, idp, idToken, spent.nonceHash);
  const user = await userFor(cfg, tenant, claims);
  return { ...(await openSession(tenant, user, 'sso', request)), email: user.email };
}

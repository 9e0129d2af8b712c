import { SignJWT, jwtVerify, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import { keys } from '../store/keys.js';
import { getMany, queryAll, queryFirst } from '../store/pagination.js';
import { publicOnly } from './jwk-set.js';
import { newId, nowIso, UUID_RE } from '../ids.js';
import { openJson, sealJson } from '../crypto/envelope.js';
import { sessionState } from './session-state.js';
import { getTokenKey, indexTokenKey, putTokenKey } from './store.js';
import { currentScope, identifyTenant } from '../tenancy/scope.js';

/** The calls of this request go out with a tenant session (a tenant route once its account is named). */
const inTenantSession = (): boolean => currentScope()?.tenantId !== undefined;
import { isIssuer } from './authorization-server.js';

/**
 * Access tokens (JWT, ES256) signed by a per-tenant token-signing key. The public JWK is
 * stored as is (it joins the tenant's JWKS); the private JWK is sealed with the tenant's
 * data key. Login flows issue these; authentication verifies them with jose.
 */
export const TOKEN_ISSUER = 'secrets-api';
export const TOKEN_AUDIENCE = 'secrets-api';
const ALG = 'ES256';

interface AccessClaims {
  readonly tenantId: string;
  readonly subject: string;
  readonly scopes: string[];
  readonly tokenId: string;
  /** RFC 9068 `client_id`: the OAuth client the token was issued to (lib/oauth); absent for the service's own sign-ins. */
  readonly clientId?: string;
}

async function currentSigningKey(tenantId: string): Promise<{ kid: string; privateJwk: JWK }> {
  const item = await queryFirst({ pk: keys.tenant(tenantId).pk, sk: { prefix: keys.tokenKeyPrefix }, newestFirst: true });
  if (item) {
    const kid = item.kid as string;
    // a key written before the service's own set (or in a tenant session: listed by the relay) joins
    // it here only on a function's own credentials: a tenant session may name no listing key
    if (item.platpk === undefined && !inTenantSession()) await indexTokenKey(tenantId, kid);
    return { kid, privateJwk: await openJson<JWK>({ tenantId, type: 'token_key', id: kid, version: 1 }, item.private as Uint8Array) };
  }
  const kid = newId();
  const { publicKey, privateKey } = await generateKeyPair(ALG, { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: ALG, use: 'sig' };
  const privateJwk = await exportJWK(privateKey);
  // in a tenant session (a sign-in route acting for the account, lib/routes.ts
  // SELF_IDENTIFYING_TENANT_ROUTES) the key is put without its TOKENKEYS listing, which no
  // tenant session may name (infra/grants/tenant-table.ts): the stream relay lists it from the
  // key's own sort key on its insert (lib/events/platform-listings.ts listTokenKey)
  const listed = !inTenantSession();
  await putTokenKey(tenantId, kid, publicJwk, await sealJson({ tenantId, type: 'token_key', id: kid, version: 1 }, privateJwk), nowIso(), listed);
  return { kid, privateJwk };
}

/**
 * The authorization server's JWK Set (RFC 7517; GET /api/v1/auth/oauth/jwks, its discovery
 * `jwks_uri`): the public keys the service signs access tokens with, every account's
 * token-signing keys and nothing else. A key a user can generate, import or export (the
 * account's jwt-signing keys, GET /api/v1/.well-known/jwks.json) never joins it, so a token a
 * user signs never verifies for a resource server trusting the authorization server. Read
 * from the keys' own listing (keys.tokenKeyIndex), public parameters only.
 */
export async function serviceKeySet(): Promise<{ keys: JWK[] }> {
  const listed = (await Promise.all(keys.tokenKeyIndexPks.map((pk) => queryAll({ pk, index: 'plat' })))).flat();
  const refs = listed
    .map((i) => ({ pk: i.pk as string, sk: i.sk as string }))
    .filter((k) => k.pk.startsWith('T#') && k.sk.startsWith(keys.tokenKeyPrefix));
  // the public JWK only: the sealed private part is never read here
  const items = await getMany(refs, ['public']);
  const set = items.filter((i) => i.public).map((i) => publicOnly(i.public as Record<string, unknown>));
  return { keys: set.sort((a, b) => String(a.kid).localeCompare(String(b.kid))) };
}

/**
 * A token of an OAuth client's grant (RFC 9068): `iss` the discovery issuer, `client_id` the
 * client. The service's own sign-ins keep TOKEN_ISSUER.
 */
export interface ClientTokenFacts {
  readonly issuer: string;
  readonly clientId: string;
}

export async function issueAccessToken(
  tenantId: string,
  subject: string,
  scopes: readonly string[],
  ttlSeconds = 900,
  sessionId?: string,
  client?: ClientTokenFacts,
): Promise<string> {
  const { kid, privateJwk } = await currentSigningKey(tenantId);
  return new SignJWT({ tid: tenantId, scope: scopes.join(' '), ...(sessionId ? { sid: sessionId } : {}), ...(client ? { client_id: client.clientId } : {}) })
    .setProtectedHeader({ alg: ALG, kid, typ: 'at+jwt' })
    .setIssuer(client?.issuer ?? TOKEN_ISSUER)
    .setAudience(TOKEN_AUDIENCE)
    .setSubject(subject)
    .setJti(newId())
    .setIssuedAt()
    .setExpirationTime(`${ttlSeconds}s`)
    .sign(await importJWK(privateJwk, ALG));
}

/**
 * A JWT other than an access token signed with the account's current token-signing key (its
 * public half is in the authorization server's set): an OpenID Connect ID token (lib/oauth).
 */
export async function signWithTokenKey(tenantId: string, payload: Record<string, unknown>): Promise<string> {
  const { kid, privateJwk } = await currentSigningKey(tenantId);
  return new SignJWT(payload).setProtectedHeader({ alg: ALG, kid, typ: 'JWT' }).sign(await importJWK(privateJwk, ALG));
}

/**
 * The public half of one of an account's token-signing keys, by its `kid`; undefined when the
 * account has no such key. What a JWT signed with signWithTokenKey (an ID token) verifies
 * against, read with that account's credentials (lib/tenancy) as an access token's key is.
 */
export async function tokenKeyOf(tenantId: string, kid: string): Promise<JWK | undefined> {
  if (!UUID_RE.test(tenantId)) return undefined;
  identifyTenant(tenantId);
  const out = { Item: await getTokenKey(tenantId, kid) };
  return out.Item?.public ? (out.Item.public as JWK) : undefined;
}

/** Why an access token is refused (GET /api/v1/diagnostics/auth says it). */
type TokenProblem =
  | 'malformed'
  | 'unknown_issuer'
  | 'unsupported_algorithm'
  | 'unknown_key'
  | 'invalid_signature'
  | 'wrong_audience'
  | 'expired'
  | 'invalid_claims'
  | 'session_revoked'
  | 'session_expired';

type TokenVerdict =
  | { readonly ok: true; readonly claims: AccessClaims; readonly expiresAt: string }
  | { readonly ok: false; readonly problem: TokenProblem; readonly expiredAt?: string };

const refuse = (problem: TokenProblem, expiredAt?: string): TokenVerdict => ({ ok: false, problem, ...(expiredAt ? { expiredAt } : {}) });

function claimProblem(error: unknown): TokenProblem {
  const e = error as { code?: string; claim?: string };
  if (e.code === 'ERR_JWT_EXPIRED') return 'expired';
  if (e.code === 'ERR_JWT_CLAIM_VALIDATION_FAILED' && e.claim === 'aud') return 'wrong_audience';
  if (e.code === 'ERR_JWT_CLAIM_VALIDATION_FAILED' && e.claim === 'iss') return 'unknown_issuer';
  if (e.code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED') return 'invalid_signature';
  return 'invalid_claims';
}

/**
 * Verifies signature, issuer, audience and lifetime, and, for a token of a sign-in session
 * (claim `sid`, lib/users/sessions.ts), that the session is still active: one more
 * consistent GetItem, read beside the key's, nothing cached. Nothing about the token's
 * account is told before its signature verifies.
 */
export async function checkAccessToken(token: string): Promise<TokenVerdict> {
  let header: ReturnType<typeof decodeProtectedHeader>;
  let unverified: ReturnType<typeof decodeJwt>;
  try {
    header = decodeProtectedHeader(token);
    unverified = decodeJwt(token);
  } catch {
    return refuse('malformed');
  }
  const { tid, sid } = unverified;
  const issuer = unverified.iss;
  if (issuer !== TOKEN_ISSUER && !(typeof issuer === 'string' && isIssuer(issuer))) return refuse('unknown_issuer');
  if (header.alg !== ALG) return refuse('unsupported_algorithm');
  if (typeof header.kid !== 'string' || typeof tid !== 'string' || !UUID_RE.test(tid)) return refuse('unknown_key');
  if (sid !== undefined && (typeof sid !== 'string' || !UUID_RE.test(sid))) return refuse('malformed');
  // the token names its account: its key and session are read with that account's credentials
  // (lib/tenancy; a forged `tid` reaches only that account's public key, and then fails)
  identifyTenant(tid);
  const [out, state] = await Promise.all([
    getTokenKey(tid, header.kid).then((Item) => ({ Item })),
    sid === undefined ? undefined : sessionState(tid, sid),
  ]);
  if (!out.Item) return refuse('unknown_key');
  let payload: Awaited<ReturnType<typeof jwtVerify>>['payload'];
  try {
    ({ payload } = await jwtVerify(token, await importJWK(out.Item.public as JWK, ALG), {
      issuer,
      audience: TOKEN_AUDIENCE,
      algorithms: [ALG],
      typ: 'at+jwt',
      clockTolerance: 5,
      requiredClaims: ['exp', 'sub', 'jti'],
    }));
  } catch (error) {
    const problem = claimProblem(error);
    // the signature verified (jose checks claims after it): the expiry is the caller's own
    return refuse(problem, problem === 'expired' && typeof unverified.exp === 'number' ? new Date(unverified.exp * 1000).toISOString() : undefined);
  }
  if (payload.tid !== tid || typeof payload.scope !== 'string') return refuse('invalid_claims');
  // a client's token names its client, the service's own never does
  if ((issuer === TOKEN_ISSUER) !== (payload.client_id === undefined) || (payload.client_id !== undefined && typeof payload.client_id !== 'string'))
    return refuse('invalid_claims');
  if (state !== undefined && state !== 'active') return refuse(state === 'expired' ? 'session_expired' : 'session_revoked');
  return {
    ok: true,
    // a session's tokens are one credential: the session id is the principal id (revocation, rate limits)
    claims: {
      tenantId: tid,
      subject: payload.sub!,
      scopes: payload.scope.split(' ').filter(Boolean),
      tokenId: sid ?? payload.jti!,
      ...(typeof payload.client_id === 'string' ? { clientId: payload.client_id } : {}),
    },
    expiresAt: new Date(payload.exp! * 1000).toISOString(),
  };
}

/** The claims of an acceptable access token; undefined when any check fails. */
export async function verifyAccessToken(token: string): Promise<AccessClaims | undefined> {
  try {
    const verdict = await checkAccessToken(token);
    return verdict.ok ? verdict.claims : undefined;
  } catch {
    return undefined;
  }
}

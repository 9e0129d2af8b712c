import { createLocalJWKSet, decodeJwt, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';
import { systemContext } from '../auth/principal.js';
import { keysForIssuer } from '../federation/jwks.js';
import type { WorkloadBinding } from '../federation/schemas.js';
import { badRequest } from '../core/errors.js';
import { newId, UUID_RE } from '../ids.js';
import { getTenant } from '../store/tenants.js';
import { identifyTenant } from '../tenancy/scope.js';
import { openClientSession, type RequestFacts } from '../users/sessions.js';

/**
 * Workload token exchange (RFC 8693): a CI job, a Kubernetes service account or a cloud
 * workload presents a JWT of its platform's issuer and gets a short-lived access token of
 * this service. Which account: the subject token's audience, `urn:secrets-api:account:<id>`
 * (the workload asks its platform for a token with this audience, so a token meant for one
 * account is never accepted by another). What it gets: the first workload binding of the
 * issuer's JWK set (lib/federation/jwks.ts, admin-written) whose subject and claim patterns
 * match, its scopes (or the requested subset) for its lifetime. Every refusal of the subject
 * token is RFC 8693 §2.2.2 `invalid_request`; a scope beyond the binding is `invalid_scope`;
 * an `audience` parameter naming another target than the subject token's account is `invalid_target`.
 */
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const JWT_TYPES = ['urn:ietf:params:oauth:token-type:jwt', 'urn:ietf:params:oauth:token-type:id_token'];
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const AUDIENCE_PREFIX = 'urn:secrets-api:account:';
const ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

interface ExchangeRequest {
  readonly grant_type: string;
  readonly subject_token: string;
  readonly subject_token_type: string;
  readonly requested_token_type?: string | undefined;
  readonly audience?: string | undefined;
  readonly scope?: string | undefined;
}

const refuse = (message: string) => badRequest(message, undefined, 'invalid_request');

/** `*` stands for any run of characters; everything else is itself. */
function matches(pattern: string, value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const re = new RegExp(
    `^${pattern
      .split('*')
      .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
    's',
  );
  return re.test(value);
}

const bindingFor = (bindings: readonly WorkloadBinding[], claims: JWTPayload) =>
  bindings.find((b) => matches(b.subject, claims.sub) && Object.entries(b.claims).every(([name, p]) => matches(p, claims[name])));

export async function exchange(body: ExchangeRequest, request: RequestFacts) {
  if (body.grant_type !== TOKEN_EXCHANGE) throw badRequest(`grant_type must be ${TOKEN_EXCHANGE}`, undefined, 'unsupported_grant_type');
  if (!JWT_TYPES.includes(body.subject_token_type)) throw refuse(`subject_token_type must be one of ${JWT_TYPES.join(', ')}`);
  if (body.requested_token_type !== undefined && body.requested_token_type !== ACCESS_TOKEN_TYPE)
    throw refuse(`requested_token_type can only be ${ACCESS_TOKEN_TYPE}`);
  let unverified: JWTPayload;
  try {
    unverified = decodeJwt(body.subject_token);
  } catch {
    throw refuse('subject_token is not a JWT');
  }
  const auds = (Array.isArray(unverified.aud) ? unverified.aud : [unverified.aud]).filter((a): a is string => typeof a === 'string');
  const ours = auds.filter((a) => a.startsWith(AUDIENCE_PREFIX) && UUID_RE.test(a.slice(AUDIENCE_PREFIX.length)));
  if (ours.length !== 1) throw refuse(`wrong audience: the subject token's aud must name one account as ${AUDIENCE_PREFIX}<account id>`);
  const audience = ours[0]!;
  // RFC 8693 §2.2.2: no token is issued for a target other than the account the subject token names
  if (body.audience !== undefined && body.audience !== audience)
    throw badRequest('audience differs from the subject token\u2019s audience: a token is issued only for that account', undefined, 'invalid_target');
  // the subject token's audience names the account: everything from here on (the account, its JWK
  // sets, the session opened) in that account's tenant session (a tenant route, lib/routes.ts
  // SELF_IDENTIFYING_TENANT_ROUTES); an unverified audience reaches only that account's items
  identifyTenant(audience.slice(AUDIENCE_PREFIX.length));
  const tenant = await getTenant(audience.slice(AUDIENCE_PREFIX.length));
  // an unknown account and an unknown issuer are one answer: nothing tells which accounts exist
  const set =
    tenant && tenant.status === 'active' && typeof unverified.iss === 'string'
      ? await keysForIssuer(systemContext(tenant, 'workload-exchange', request), unverified.iss)
      : undefined;
  if (!tenant || !set) throw refuse('unknown issuer: no JWK set of the account holds the keys of the subject token\u2019s issuer');
  let claims: JWTPayload;
  try {
    ({ payload: claims } = await jwtVerify(body.subject_token, createLocalJWKSet({ keys: set.keys } as JSONWebKeySet), {
      issuer: set.issuer!,
      audience,
      algorithms: ALGS,
      requiredClaims: ['exp', 'sub'],
      clockTolerance: 30,
    }));
  } catch (error) {
    const code = (error as { code?: string }).code;
    throw refuse(code === 'ERR_JWT_EXPIRED' ? 'the subject token has expired' : `the subject token does not verify: ${(error as Error).message}`);
  }
  const binding = bindingFor(set.workload_bindings, claims);
  if (!binding) throw refuse('no workload binding of this issuer admits the subject token\u2019s subject and claims');
  const requested = body.scope?.trim() ? [...new Set(body.scope.trim().split(/ +/))] : binding.scopes;
  const beyond = requested.filter((s) => !binding.scopes.includes(s));
  if (beyond.length > 0) throw badRequest(`scope beyond the workload binding: ${beyond.join(' ')}`, undefined, 'invalid_scope');
  const out = await openClientSession(
    tenant,
    { client_id: `workload:${set.id}`, subject: `workload:${claims.sub}`, method: 'workload', scopes: requested, seconds: binding.lifetime_seconds },
    { ...request, requestId: request.requestId || newId() },
  );
  return {
    access_token: out.access_token,
    issued_token_type: ACCESS_TOKEN_TYPE,
    token_type: out.token_type,
    expires_in: out.expires_in,
    scope: out.scope,
  };
}

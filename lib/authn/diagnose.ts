import { badRequest, HttpError } from '../core/errors.js';
import { ROUTES } from '../routes.js';
import { authenticateBearer, header, type Headers } from './authenticate.js';
import { checkAccessToken } from '../auth/jwt.js';
import { missingScopes } from '../auth/scopes.js';

/**
 * GET /api/v1/diagnostics/auth: why the credential the caller presents is or is not
 * accepted, and whether it would pass a named route's checks. It runs the same checks as
 * every request (lib/authn/authenticate.ts; for access tokens the detailed verdict of
 * lib/auth/jwt.ts) and tells the reason, never the credential (no part of it is echoed)
 * and nothing of an account the credential does not prove: an account is named only once
 * the credential verified. A tenant route (lib/routes.ts SELF_IDENTIFYING_TENANT_ROUTES): its
 * own role reads the presented credential's item and the projected account only, an access
 * token's key and session are read in the session of the account it names.
 */
const JWT_RE = /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

const HINTS: Readonly<Record<string, string>> = {
  malformed: 'the token is not a well-formed JWT',
  unknown_issuer: 'the token was not issued by this service (iss)',
  unsupported_algorithm: 'access tokens of this service are ES256',
  unknown_key: 'no signing key of this service has the token\u2019s kid for the account it names',
  invalid_signature: 'the signature does not verify',
  wrong_audience: 'the token is for another audience (aud)',
  expired: 'the token has expired: refresh the session (POST /api/v1/auth/refresh)',
  invalid_claims: 'a required claim is missing or invalid',
  session_revoked: 'the session was signed out or revoked: sign in again',
  session_expired: 'the session has ended: sign in again',
};

type CredentialKind = 'access_token' | 'api_token' | 'api_key';

const kindOf = (token: string): CredentialKind => (JWT_RE.test(token) ? 'access_token' : token.startsWith('scp_') ? 'api_token' : 'api_key');

export async function diagnoseAuth(headers: Headers, routeKey?: string) {
  const route = routeKey === undefined ? undefined : ROUTES.find((r) => r.key === routeKey.trim().replace(/\s+/, ' '));
  if (routeKey !== undefined && !route) {
    throw badRequest('unknown route: name it as in the route table, e.g. "GET /api/v1/secrets/{name}"', [
      { path: 'query.route', message: 'no such route' },
    ]);
  }
  const authorization = header(headers, 'authorization');
  if (!authorization) {
    return {
      accepted: false,
      reason: 'missing_credentials',
      explanation: 'no credential presented: send Authorization: Bearer <API key or access token>',
    };
  }
  const token = /^bearer +(\S+)$/i.exec(authorization.trim())?.[1];
  if (!token) return { accepted: false, reason: 'malformed_header', explanation: 'expected "Authorization: Bearer <token>"' };
  const kind = kindOf(token);
  if (kind === 'access_token') {
    const verdict = await checkAccessToken(token);
    if (!verdict.ok) {
      return {
        accepted: false,
        credential: { kind },
        reason: verdict.problem,
        explanation: HINTS[verdict.problem],
        ...(verdict.expiredAt ? { expired_at: verdict.expiredAt } : {}),
      };
    }
  }
  let principal: Awaited<ReturnType<typeof authenticateBearer>>;
  try {
    principal = await authenticateBearer(headers);
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    return {
      accepted: false,
      credential: { kind },
      reason: error.code === 'unauthorized' ? 'unknown_credential' : error.code,
      explanation: error.message,
    };
  }
  const credential = {
    kind,
    id: principal.id,
    account_id: principal.tenantId,
    user: principal.user,
    scopes: principal.scopes,
    operator: principal.operator,
  };
  if (!route) return { accepted: true, credential };
  const missing = missingScopes(principal.scopes, route.scopes);
  const selfAuthenticated = route.auth !== 'bearer' && route.auth !== 'operator';
  const operatorMissing = route.auth === 'operator' && !principal.operator;
  const allowed = !selfAuthenticated && missing.length === 0 && !operatorMissing;
  return {
    accepted: true,
    credential,
    route: {
      key: route.key,
      allowed,
      ...(selfAuthenticated ? { reason: 'the route authenticates with its own credential, not a bearer token' } : {}),
      ...(operatorMissing ? { reason: 'operator_required' } : {}),
      ...(!operatorMissing && missing.length > 0 ? { reason: 'insufficient_scope', missing_scopes: missing } : {}),
      ...(route.handlerScopes ? { note: 'the handler checks further scopes per resource' } : {}),
    },
  };
}

import { config } from '../config.js';

/**
 * The authorization server's addresses. There is one issuer for every account,
 * `<base>/api/v1/auth/oauth`: OpenID Connect Discovery and RFC 8414 want an issuer without
 * query or fragment, equal to the URL discovery was made from minus the well-known suffix
 * (openid-client v6 checks exactly this), so the account cannot be a query of it. The
 * account is named by the client_id instead (`<account id>.<client id>`,
 * lib/federation/clients.ts) and, for a workload, by the subject token's audience.
 * The base is PUBLIC_BASE_URL (always set in AWS), else this request's host.
 */
export function publicBase(headers: Readonly<Record<string, string>>): string {
  const base = config().PUBLIC_BASE_URL ?? `${headers['x-forwarded-proto'] ?? 'https'}://${headers.host ?? 'localhost'}`;
  return base.replace(/\/+$/, '');
}

export const issuerOf = (headers: Readonly<Record<string, string>>): string => `${publicBase(headers)}/api/v1/auth/oauth`;
export const tokenEndpointOf = (headers: Readonly<Record<string, string>>): string => `${issuerOf(headers)}/token`;

/**
 * How the browser holds its sign-in session for the authorization endpoint: the session's
 * access token in an HttpOnly cookie, SameSite=Lax (a top-level redirect from the client
 * carries it; no cross-site subrequest does), Secure when the service is served over https,
 * scoped to /api/v1/auth, as long as the token lives. The sign-in routes (passkey, SSO, SRP)
 * set it; /api/v1/auth/oauth/authorize reads it and checks the token as every route does
 * (signature, expiry, the session still active), so signing out ends it too.
 */
const SESSION_COOKIE = 'sc_session';

export function sessionCookie(accessToken: string, maxAge: number, headers: Readonly<Record<string, string>>): string {
  const secure = publicBase(headers).startsWith('https:') ? '; Secure' : '';
  return `${SESSION_COOKIE}=${accessToken}; Path=/api/v1/auth; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure}`;
}

export function sessionFromCookie(headers: Readonly<Record<string, string>>): string | undefined {
  for (const part of (headers.cookie ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === SESSION_COOKIE) return value.join('=') || undefined;
  }
  return undefined;
}

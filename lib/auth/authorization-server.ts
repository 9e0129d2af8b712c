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

const ISSUER_PATH = '/api/v1/auth/oauth';

/**
 * Whether `iss` is this authorization server's issuer: exactly the configured one when
 * PUBLIC_BASE_URL is set (always in AWS), else any origin's (the local runtime names its
 * issuer after the Host it was reached at). The token's signature, by a key of the service's
 * own set, is what makes it the service's; this is the claim's sanity check (RFC 9068 §4).
 */
export function isIssuer(iss: string): boolean {
  const base = config().PUBLIC_BASE_URL;
  if (base !== undefined) return iss === `${base.replace(/\/+$/, '')}${ISSUER_PATH}`;
  if (!iss.endsWith(ISSUER_PATH)) return false;
  try {
    const url = new URL(iss);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.pathname === ISSUER_PATH && !url.search && !url.hash;
  } catch {
    return false;
  }
}

/**
 * The OpenID Connect scopes (OIDC Core §3.1.2.1, §5.4): they ask for identity (an ID token,
 * the userinfo claims), never for access to a route, so any client may ask for them in the
 * authorization code flow and a person holds them without a role granting them.
 */
export const IDENTITY_SCOPES: readonly string[] = ['openid', 'email', 'profile'];
export const isIdentityScope = (s: string): boolean => IDENTITY_SCOPES.includes(s);

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

/** The Set-Cookie that ends the browser's session cookie (RP-initiated logout). */
export function clearedSessionCookie(headers: Readonly<Record<string, string>>): string {
  const secure = publicBase(headers).startsWith('https:') ? '; Secure' : '';
  return `${SESSION_COOKIE}=; Path=/api/v1/auth; Max-Age=0; HttpOnly; SameSite=Lax${secure}`;
}

export function sessionFromCookie(headers: Readonly<Record<string, string>>): string | undefined {
  for (const part of (headers.cookie ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === SESSION_COOKIE) return value.join('=') || undefined;
  }
  return undefined;
}

import type { Route } from '../routes.js';
import { forbidden, unauthorized } from '../http/errors.js';
import { getApiKeyAuth } from '../store/api-keys.js';
import { getTenant, type Tenant } from '../store/tenants.js';
import { hashApiKey } from './api-keys.js';
import { verifyAccessToken } from './jwt.js';
import { ADMIN_SCOPE } from './scopes.js';
import type { Principal } from './principal.js';

export type Headers = Readonly<Record<string, string | undefined>>;

const JWT_RE = /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** Header lookup without regard to case (API Gateway keeps the client's spelling). */
export function header(headers: Headers, name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === lower) return v;
  return undefined;
}

function activeTenant(tenant: Tenant | undefined): Tenant {
  if (!tenant) throw unauthorized();
  if (tenant.status !== 'active') throw forbidden('account is suspended', 'tenant_suspended');
  return tenant;
}

/**
 * Verifies `Authorization: Bearer <API key | JWT>`: every check reads the table with
 * consistent reads and caches nothing, so a revocation or suspension takes effect on the
 * very next request. `X-API-Key` alone is refused.
 */
export async function authenticateBearer(headers: Headers, now = Date.now()): Promise<Principal> {
  const authorization = header(headers, 'authorization');
  if (!authorization) {
    if (header(headers, 'x-api-key') !== undefined) {
      throw unauthorized('the X-API-Key header is not accepted; send Authorization: Bearer <API key>', 'unsupported_credentials');
    }
    throw unauthorized('missing credentials: send Authorization: Bearer <API key>');
  }
  const match = /^Bearer ([\x21-\x7e]{8,4096})$/.exec(authorization.trim());
  if (!match) throw unauthorized('malformed Authorization header: expected "Bearer <token>"');
  const token = match[1]!;

  if (JWT_RE.test(token)) {
    const claims = await verifyAccessToken(token);
    if (!claims) throw unauthorized();
    const tenant = activeTenant(await getTenant(claims.tenantId));
    return {
      kind: 'user_token',
      tenantId: tenant.id,
      tenant,
      id: claims.tokenId,
      user: claims.subject,
      scopes: claims.scopes,
      operator: tenant.operator && claims.scopes.includes(ADMIN_SCOPE),
    };
  }

  const record = await getApiKeyAuth(hashApiKey(token));
  if (!record) throw unauthorized();
  if (record.expires_at && Date.parse(record.expires_at) <= now) throw unauthorized('API key has expired', 'credentials_expired');
  const tenant = activeTenant(await getTenant(record.tenant_id));
  return {
    kind: 'api_key',
    tenantId: tenant.id,
    tenant,
    id: record.key_id,
    user: record.created_by,
    scopes: record.scopes,
    operator: tenant.operator && record.scopes.includes(ADMIN_SCOPE),
  };
}

/**
 * Signed device requests (RFC 9421; the agents capability). Until a device can be
 * enrolled no device key exists, so every device request is unauthenticated.
 */
export async function authenticateDevice(headers: Headers): Promise<Principal> {
  if (!header(headers, 'signature') || !header(headers, 'signature-input')) {
    throw unauthorized('missing request signature (Signature and Signature-Input headers)');
  }
  throw unauthorized('unknown device key');
}

/** Authentication for a route's auth kind; null for routes that authenticate themselves. */
export async function authenticate(route: Route, headers: Headers): Promise<Principal | null> {
  switch (route.auth) {
    case 'public':
    case 'endpoint':
    case 'temp-token':
      return null;
    case 'bearer':
      return authenticateBearer(headers);
    case 'operator': {
      const principal = await authenticateBearer(headers);
      if (!principal.operator) throw forbidden('platform operator credentials required', 'operator_required');
      return principal;
    }
    case 'device':
      return authenticateDevice(headers);
  }
}

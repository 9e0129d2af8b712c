import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { Route } from '../routes.js';
import { forbidden, unauthorized } from '../core/errors.js';
import { getApiKeyAuth } from '../store/api-keys.js';
import { readAccount, type Tenant } from '../store/tenants.js';
import { identifyTenant } from '../tenancy/scope.js';
import { shareSessionsThrough } from '../tenancy/credentials.js';
import { tableSessionStore } from './tenant-sessions.js';
import { hashApiKey } from '../auth/api-keys.js';
import { API_TOKEN_RE, authenticateApiToken } from '../auth/api-tokens.js';
import { authenticateSignedRequest } from '../agents/device-signature.js';
import { verifyAccessToken } from '../auth/jwt.js';
import { ADMIN_SCOPE } from '../auth/scopes.js';
import type { Principal } from '../auth/principal.js';

// every function that authenticates tenants shares their STS sessions through the table (docs/capacity.md)
shareSessionsThrough(tableSessionStore);

export type Headers = Readonly<Record<string, string | undefined>>;

const JWT_RE = /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** Header lookup without regard to case (API Gateway keeps the client's spelling). */
export function header(headers: Headers, name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === lower) return v;
  return undefined;
}

/**
 * Whether `Authorization: Bearer` carries something other than an access token (a JWT): an API
 * key or a personal API token. A route that admits only a person's sign-in session refuses
 * those before reading anything (GET /api/v1/auth/cli/login's review and decision: its
 * execution role reads no credential item, lib/routes.ts OWN_PARTITIONS).
 */
export function bearerIsNotAccessToken(headers: Headers): boolean {
  const token = /^bearer +([\x21-\x7e]{8,4096})$/i.exec((header(headers, 'authorization') ?? '').trim())?.[1];
  return token !== undefined && !JWT_RE.test(token);
}

function activeTenant(tenant: Tenant | undefined): Tenant {
  if (!tenant) throw unauthorized();
  if (tenant.status !== 'active') throw forbidden('account is suspended', 'tenant_suspended');
  return tenant;
}

/**
 * Verifies `Authorization: Bearer <API key | JWT>` (scheme in any case): every check reads the table with
 * consistent reads and caches nothing, so a revocation or suspension takes effect on the
 * very next request. `X-API-Key` alone is refused.
 */
/**
 * Told the account and credential as soon as a credential names them (lib/ratelimit/gate.ts
 * starts its check in parallel), with what the credential item itself says of the caller
 * (lib/core/admission.ts starts the handler on it, beside the read of the account).
 */
export type CredentialFacts = Pick<Principal, 'kind' | 'tenantId' | 'id' | 'user' | 'scopes' | 'client'>;
type OnIdentified = (tenantId: string, credentialId: string, tenant: Promise<Tenant | undefined>, facts?: CredentialFacts) => void;

export async function authenticateBearer(headers: Headers, now = Date.now(), onIdentified?: OnIdentified): Promise<Principal> {
  const authorization = header(headers, 'authorization');
  if (!authorization) {
    if (header(headers, 'x-api-key') !== undefined) {
      throw unauthorized('the X-API-Key header is not accepted; send Authorization: Bearer <API key>', 'unsupported_credentials');
    }
    throw unauthorized('missing credentials: send Authorization: Bearer <API key>');
  }
  // RFC 6750 §2.1: "Bearer" 1*SP b64token, the scheme in any case (RFC 9110 §11.1)
  const match = /^bearer +([\x21-\x7e]{8,4096})$/i.exec(authorization.trim());
  if (!match) throw unauthorized('malformed Authorization header: expected "Bearer <token>"');
  const token = match[1]!;

  if (JWT_RE.test(token)) {
    const claims = await verifyAccessToken(token);
    if (!claims) throw unauthorized();
    const read = readAccount(claims.tenantId);
    // an OAuth client's token (RFC 9068 client_id) acts for the person with its own scopes only (lib/credentials/access.ts)
    const client = claims.clientId !== undefined ? { client: claims.clientId } : {};
    onIdentified?.(claims.tenantId, claims.tokenId, read, {
      kind: 'user_token',
      tenantId: claims.tenantId,
      id: claims.tokenId,
      user: claims.subject,
      scopes: claims.scopes,
      ...client,
    });
    const tenant = activeTenant(await read);
    return {
      kind: 'user_token',
      tenantId: tenant.id,
      tenant,
      id: claims.tokenId,
      user: claims.subject,
      scopes: claims.scopes,
      operator: tenant.operator && claims.scopes.includes(ADMIN_SCOPE),
      ...client,
    };
  }

  if (API_TOKEN_RE.test(token)) {
    // personal API token (lib/auth/api-tokens.ts): never a platform-operator credential
    const auth = await authenticateApiToken(token, now);
    const read = readAccount(auth.tenant_id);
    identifyTenant(auth.tenant_id);
    onIdentified?.(auth.tenant_id, auth.token_id, read, {
      kind: 'api_token',
      tenantId: auth.tenant_id,
      id: auth.token_id,
      user: auth.created_by,
      scopes: auth.scopes,
    });
    const tenant = activeTenant(await read);
    return { kind: 'api_token', tenantId: tenant.id, tenant, id: auth.token_id, user: auth.created_by, scopes: auth.scopes, operator: false };
  }

  const record = await getApiKeyAuth(hashApiKey(token));
  if (!record) throw unauthorized();
  if (record.expires_at && Date.parse(record.expires_at) <= now) throw unauthorized('API key has expired', 'credentials_expired');
  const read = readAccount(record.tenant_id);
  identifyTenant(record.tenant_id);
  onIdentified?.(record.tenant_id, record.key_id, read, {
    kind: 'api_key',
    tenantId: record.tenant_id,
    id: record.key_id,
    user: record.created_by,
    scopes: record.scopes,
  });
  const tenant = activeTenant(await read);
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
 * Signed device requests: RFC 9421 HTTP Message Signatures over method, path, query and
 * the RFC 9530 Content-Digest of the body (lib/agents/device-signature.ts). The signature
 * covers more than headers, so this needs the whole proxy event.
 */
async function authenticateDevice(headers: Headers, event?: APIGatewayProxyEvent, onIdentified?: OnIdentified): Promise<Principal> {
  if (!header(headers, 'signature') || !header(headers, 'signature-input')) {
    throw unauthorized('missing request signature (Signature and Signature-Input headers, RFC 9421)');
  }
  if (!event) throw unauthorized('a signed device request needs the whole request');
  return authenticateSignedRequest(event, Date.now(), onIdentified);
}

/** Authentication for a route's auth kind; null for routes that authenticate themselves. */
export async function authenticate(
  route: Route,
  headers: Headers,
  event?: APIGatewayProxyEvent,
  onIdentified?: OnIdentified,
): Promise<Principal | null> {
  switch (route.auth) {
    case 'public':
    case 'endpoint':
    case 'temp-token':
      return null;
    case 'bearer':
      return authenticateBearer(headers, undefined, onIdentified);
    case 'operator': {
      const principal = await authenticateBearer(headers, undefined, onIdentified);
      if (!principal.operator) throw forbidden('platform operator credentials required', 'operator_required');
      return principal;
    }
    case 'device':
      return authenticateDevice(headers, event, onIdentified);
  }
}

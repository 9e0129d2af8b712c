import { createHash } from 'node:crypto';
import type { JWK } from 'jose';
import { defineHandler, protocol } from '../../lib/http/index.js';
import { queryAll } from '../../lib/store/pagination.js';
import { keys } from '../../lib/store/keys.js';
import { listResources } from '../../lib/store/resources.js';
import { AccountJwks } from '../../lib/certificates/schemas.js';

/**
 * GET /api/v1/.well-known/jwks.json: the account's public signing-key set (RFC 7517):
 * every jwt-signing key (`/api/v1/keys/jwt-signing`) and the service's token-signing keys
 * of the account (lib/auth/jwt.ts), public parameters only. Handler scope: any valid
 * credential of the account may read it, like any JWKS it is public information (a
 * resource server verifying the account's tokens needs nothing more).
 */
const PUBLIC_PARAMS = ['kty', 'crv', 'x', 'y', 'n', 'e', 'kid', 'alg', 'use', 'key_ops'] as const;
const publicOnly = (jwk: Record<string, unknown>): JWK =>
  Object.fromEntries(PUBLIC_PARAMS.filter((p) => jwk[p] !== undefined).map((p) => [p, jwk[p]])) as JWK;

async function tokenSigningKeys(tenantId: string): Promise<JWK[]> {
  // the public JWK only: the sealed private part is never read here
  const items = await queryAll({ pk: keys.tenant(tenantId).pk, sk: { prefix: keys.tokenKeyPrefix }, projection: ['public'] });
  return items.filter((i) => i.public).map((i) => publicOnly(i.public as Record<string, unknown>));
}

async function jwtSigningKeys(tenantId: string): Promise<JWK[]> {
  const out: JWK[] = [];
  let cursor: string | undefined;
  do {
    const page = await listResources<{ public_jwk?: Record<string, unknown> }>(tenantId, 'jwt_signing_key', { limit: 1000, cursor });
    for (const r of page.items) if (r.meta.public_jwk) out.push(publicOnly(r.meta.public_jwk));
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

/** How long a verifier may reuse the set: a new key is seen within this time, a removed one stops verifying after it. */
const JWKS_MAX_AGE_SECONDS = 300;

/**
 * The answer is the JWK Set itself at the top level (route wire `document`), as
 * `application/jwk-set+json` (RFC 7517 §8.5.1), cacheable by the caller only (`private`: the
 * request carries credentials) for JWKS_MAX_AGE_SECONDS, with a strong ETag; a matching
 * If-None-Match gets 304 without a body.
 */
export const jwks = defineHandler({
  summary: 'Get the account’s JWK set',
  description:
    'The public keys of the account’s jwt-signing keys and its token-signing keys (RFC 7517), cacheable with an ETag: a matching `If-None-Match` gets 304.',
  responses: { 200: AccountJwks, 304: null },
  async handler({ ctx, headers }) {
    const tid = ctx.principal.tenantId;
    const [own, service] = await Promise.all([jwtSigningKeys(tid), tokenSigningKeys(tid)]);
    const set = { keys: [...own, ...service] };
    const etag = `"${createHash('sha256').update(JSON.stringify(set)).digest('base64url')}"`;
    const cache = { 'Cache-Control': `private, max-age=${JWKS_MAX_AGE_SECONDS}`, ETag: etag, Vary: 'Authorization' };
    const match = headers['if-none-match']?.split(',').map((t) => t.trim().replace(/^W\//, ''));
    if (match?.includes(etag) || match?.includes('*')) return protocol(null, cache, 304);
    return protocol(set, { ...cache, 'Content-Type': 'application/jwk-set+json' });
  },
});

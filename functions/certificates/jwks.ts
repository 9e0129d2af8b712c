import type { JWK } from 'jose';
import { jwkSetReply, publicOnly } from '../../lib/auth/jwk-set.js';
import { defineHandler } from '../../lib/http/index.js';
import { queryAll } from '../../lib/store/pagination.js';
import { keys } from '../../lib/store/keys.js';
import { listResources } from '../../lib/resources/store.js';
import { AccountJwks } from '../../lib/certificates/schemas.js';

/**
 * GET /api/v1/.well-known/jwks.json: the account's public signing-key set (RFC 7517):
 * every jwt-signing key (`/api/v1/keys/jwt-signing`) and the service's token-signing keys
 * of the account (lib/auth/jwt.ts), public parameters only. Handler scope: any valid
 * credential of the account may read it, like any JWKS it is public information (a
 * resource server verifying the account's tokens needs nothing more). It holds keys users
 * can export, so it is never the authorization server's set: that one is
 * GET /api/v1/auth/oauth/jwks (lib/auth/jwt.ts `serviceKeySet`).
 */

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

/** The account's set, answered as every JWK Set is (lib/auth/jwk-set.ts), cacheable by the caller only. */
export const jwks = defineHandler({
  summary: 'Get the account’s JWK set',
  description:
    'The public keys of the account’s jwt-signing keys and its token-signing keys (RFC 7517), cacheable with an ETag: a matching `If-None-Match` gets 304.',
  responses: { 200: AccountJwks, 304: null },
  media: { 200: ['application/jwk-set+json'] },
  async handler({ ctx, headers }) {
    const tid = ctx.principal.tenantId;
    const [own, service] = await Promise.all([jwtSigningKeys(tid), tokenSigningKeys(tid)]);
    return jwkSetReply({ keys: [...own, ...service] }, headers, 'private');
  },
});

import type { JWK } from 'jose';
import { defineHandler, ok } from '../../lib/http/index.js';
import { queryAll } from '../../lib/store/pagination.js';
import { keys } from '../../lib/store/keys.js';
import { listResources } from '../../lib/store/resources.js';

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

export const jwks = defineHandler({
  async handler({ ctx }) {
    const tid = ctx.principal.tenantId;
    const [own, service] = await Promise.all([jwtSigningKeys(tid), tokenSigningKeys(tid)]);
    return ok({ keys: [...own, ...service] }, { 'Cache-Control': 'no-store' });
  },
});

import { createHash } from 'node:crypto';
import type { JWK } from 'jose';
import { protocol, type Reply } from '../core/responses.js';

/**
 * How the service answers a JWK Set (RFC 7517 §5): the set itself at the top level (route
 * wire `document`), `application/jwk-set+json` (§8.5.1), public parameters only, cacheable for
 * JWKS_MAX_AGE_SECONDS with a strong ETag; a matching If-None-Match gets 304 without a body.
 * Served by the account's set (GET /api/v1/.well-known/jwks.json, `private`: the request
 * carries credentials) and the authorization server's (`public`: no credential).
 */
const PUBLIC_PARAMS = ['kty', 'crv', 'x', 'y', 'n', 'e', 'kid', 'alg', 'use', 'key_ops'] as const;

export const publicOnly = (jwk: Record<string, unknown>): JWK =>
  Object.fromEntries(PUBLIC_PARAMS.filter((p) => jwk[p] !== undefined).map((p) => [p, jwk[p]])) as JWK;

/** How long a verifier may reuse a set: a new key is seen within this time, a removed one stops verifying after it. */
const JWKS_MAX_AGE_SECONDS = 300;

export function jwkSetReply(set: { keys: JWK[] }, headers: Readonly<Record<string, string>>, visibility: 'public' | 'private'): Reply {
  const etag = `"${createHash('sha256').update(JSON.stringify(set)).digest('base64url')}"`;
  const cache: Record<string, string> = {
    'Cache-Control': `${visibility}, max-age=${JWKS_MAX_AGE_SECONDS}`,
    ETag: etag,
    ...(visibility === 'private' ? { Vary: 'Authorization' } : {}),
  };
  const match = headers['if-none-match']?.split(',').map((t) => t.trim().replace(/^W\//, ''));
  if (match?.includes(etag) || match?.includes('*')) return protocol(null, cache, 304);
  return protocol(set, { ...cache, 'Content-Type': 'application/jwk-set+json' });
}

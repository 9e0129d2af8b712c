import { createPublicKey } from 'node:crypto';
import type { JWK } from 'jose';
import type { FieldIssue } from '../core/errors.js';

/**
 * Validation of a JWK set (RFC 7517, RFC 7518, RFC 8037) as a trusted issuer's public keys:
 * - `keys` is a non-empty array of at most MAX_KEYS objects;
 * - key types RSA (modulus at least 2048 bits, public exponent present), EC on P-256, P-384
 *   or P-521, OKP on Ed25519 or Ed448 (signature keys); `oct` (a shared secret) is refused;
 * - private members (`d`, `p`, `q`, `dp`, `dq`, `qi`, `oth`, `k`) are refused, never stored;
 * - the key must import (node's JWK importer checks the members and the point on the curve);
 * - `alg`, when present, matches the key type (and curve); `use`, when present, is `sig`;
 * - `kid`s are unique, and present on every key of a set of more than one key.
 * The stored form keeps only the public members the RFCs define (unknown members dropped).
 */
const MAX_KEYS = 100;
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;
const EC_ALG: Record<string, string> = { 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512' };
const RSA_ALGS = new Set(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512']);
const KEPT = ['kty', 'kid', 'use', 'alg', 'key_ops', 'n', 'e', 'crv', 'x', 'y', 'x5c', 'x5t', 'x5t#S256'] as const;
/** The signature algorithms a stored key may verify: asymmetric only (never `none` or HMAC). */
export const VERIFY_ALGS = [...RSA_ALGS, 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

export type PublicJwk = JWK & { kid?: string };

function checkKey(raw: unknown, i: number, issues: FieldIssue[], where: string): PublicJwk | undefined {
  const path = `${where}.keys.${i}`;
  const bad = (message: string, field?: string) => {
    issues.push({ path: field ? `${path}.${field}` : path, message });
    return undefined;
  };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return bad('a JWK is a JSON object');
  const jwk = raw as Record<string, unknown>;
  for (const m of PRIVATE_MEMBERS) if (m in jwk) return bad('private key members are not accepted: store public keys only', m);
  const kty = jwk.kty;
  if (kty !== 'RSA' && kty !== 'EC' && kty !== 'OKP') return bad('kty must be RSA, EC or OKP', 'kty');
  if (jwk.kid !== undefined && (typeof jwk.kid !== 'string' || jwk.kid.length === 0 || jwk.kid.length > 256))
    return bad('kid must be a string of 1-256 characters', 'kid');
  if (jwk.use !== undefined && jwk.use !== 'sig') return bad('use must be "sig" (these keys verify signatures)', 'use');
  for (const f of ['n', 'e', 'x', 'y'] as const) {
    if (jwk[f] !== undefined && (typeof jwk[f] !== 'string' || !/^[A-Za-z0-9_-]+$/.test(jwk[f] as string))) return bad('must be base64url', f);
  }
  let details: ReturnType<typeof createPublicKey>['asymmetricKeyDetails'];
  try {
    const pub = createPublicKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' });
    details = pub.asymmetricKeyDetails;
    if (pub.type !== 'public') return bad('not a public key');
  } catch (error) {
    return bad(`not a valid ${kty} key: ${(error as Error).message.replace(/\s+/g, ' ').slice(0, 120)}`);
  }
  const alg = jwk.alg;
  if (alg !== undefined && typeof alg !== 'string') return bad('alg must be a string', 'alg');
  if (kty === 'RSA') {
    if ((details?.modulusLength ?? 0) < 2048) return bad('RSA keys must have at least 2048 bits', 'n');
    if (alg !== undefined && !RSA_ALGS.has(alg)) return bad('alg of an RSA key must be RS256/384/512 or PS256/384/512', 'alg');
  } else if (kty === 'EC') {
    const crv = jwk.crv as string;
    if (!EC_ALG[crv]) return bad('crv must be P-256, P-384 or P-521', 'crv');
    if (alg !== undefined && alg !== EC_ALG[crv]) return bad(`alg of a ${crv} key must be ${EC_ALG[crv]}`, 'alg');
  } else {
    if (jwk.crv !== 'Ed25519' && jwk.crv !== 'Ed448') return bad('crv must be Ed25519 or Ed448 (signature keys)', 'crv');
    if (alg !== undefined && alg !== 'EdDSA' && alg !== jwk.crv) return bad('alg of an OKP key must be EdDSA', 'alg');
  }
  const out: Record<string, unknown> = {};
  for (const k of KEPT) if (jwk[k] !== undefined) out[k] = jwk[k];
  return out as PublicJwk;
}

/** The keys of a JWK set document, validated; throws nothing, returns the issues instead. */
export function validateJwkSet(doc: unknown, where = 'body.jwks'): { keys: PublicJwk[]; issues: FieldIssue[] } {
  const issues: FieldIssue[] = [];
  if (typeof doc !== 'object' || doc === null || !Array.isArray((doc as { keys?: unknown }).keys)) {
    return { keys: [], issues: [{ path: where, message: 'a JWK set is an object with a "keys" array' }] };
  }
  const raw = (doc as { keys: unknown[] }).keys;
  if (raw.length === 0 || raw.length > MAX_KEYS) return { keys: [], issues: [{ path: `${where}.keys`, message: `1 to ${MAX_KEYS} keys` }] };
  const keys = raw.map((k, i) => checkKey(k, i, issues, where)).filter((k): k is PublicJwk => k !== undefined);
  const seen = new Set<string>();
  raw.forEach((k, i) => {
    const kid = (k as { kid?: unknown } | null)?.kid;
    if (typeof kid === 'string') {
      if (seen.has(kid)) issues.push({ path: `${where}.keys.${i}.kid`, message: `duplicate kid "${kid}"` });
      seen.add(kid);
    } else if (raw.length > 1) issues.push({ path: `${where}.keys.${i}.kid`, message: 'every key of a set of several keys needs a kid' });
  });
  return { keys, issues };
}

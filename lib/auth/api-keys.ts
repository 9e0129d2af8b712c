import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * API key format: `scm_<prefix>_<secret>` with an 8-character public prefix (shown in
 * listings and logs to identify a key) and 256 random bits. Only the SHA-256 of the whole
 * key is stored: the key has full entropy, so a slow KDF adds nothing.
 */
export const API_KEY_RE = /^scm_[a-z2-7]{8}_[A-Za-z0-9_-]{43}$/;

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

export function generateApiKey(): { key: string; prefix: string } {
  const prefix = Array.from(randomBytes(8), (b) => BASE32[b & 31]).join('');
  return { key: `scm_${prefix}_${randomBytes(32).toString('base64url')}`, prefix: `scm_${prefix}` };
}

export const hashApiKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

/** The public part of a presented key, for logs ("scm_abcdefgh"); never the secret part. */
export const publicPrefix = (key: string): string => (API_KEY_RE.test(key) ? key.slice(0, 12) : 'custom');

export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

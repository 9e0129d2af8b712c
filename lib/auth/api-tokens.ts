import { unauthorized } from '../core/errors.js';
import { generateApiKey, hashApiKey } from './api-keys.js';
import { type ApiTokenAuth, readApiTokenAuth } from './store.js';

export { apiTokenAuthDelete, apiTokenAuthGrace, apiTokenAuthPut } from './store.js';

/**
 * Personal API tokens (/api/v1/api-tokens; functions/tokens): a user's own bearer tokens
 * with scopes and an expiry, distinct from account API keys. Same shape and entropy as an
 * API key with their own prefix, `scp_<8-char public prefix>_<43 chars>`; only the SHA-256
 * is stored, in an auth item keyed by it (one consistent GetItem per request, no cache).
 * After a rotation the previous token's auth item either goes at once or carries
 * `valid_until`, the end of the grace period the caller asked for.
 */
export const API_TOKEN_RE = /^scp_[a-z2-7]{8}_[A-Za-z0-9_-]{43}$/;

export function generateApiToken(): { token: string; prefix: string } {
  const { key, prefix } = generateApiKey();
  return { token: `scp_${key.slice(4)}`, prefix: `scp_${prefix.slice(4)}` };
}

export const hashApiToken = hashApiKey;

/** Verifies a presented token: 401 when unknown, expired, or past its rotation grace period. */
export async function authenticateApiToken(token: string, now = Date.now()): Promise<ApiTokenAuth> {
  const auth = await readApiTokenAuth(hashApiToken(token));
  if (!auth) throw unauthorized();
  if (Date.parse(auth.expires_at) <= now) throw unauthorized('API token has expired', 'credentials_expired');
  if (auth.valid_until !== undefined && Date.parse(auth.valid_until) <= now) throw unauthorized('API token was rotated: use the new token', 'credentials_expired');
  return auth;
}

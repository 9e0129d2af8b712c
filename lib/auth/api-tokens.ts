import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { unauthorized } from '../core/errors.js';
import { db, tableName } from '../store/client.js';
import { keys } from '../store/keys.js';
import type { TxItem } from '../store/tx.js';
import { generateApiKey, hashApiKey } from './api-keys.js';

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

/** What authentication reads. */
interface ApiTokenAuth {
  readonly tenant_id: string;
  readonly token_id: string;
  readonly scopes: string[];
  /** The user the token acts for (its creator). */
  readonly created_by: string | null;
  readonly expires_at: string;
  /** Set on a rotated-out token during its grace period. */
  readonly valid_until?: string;
}

const DAY = 86_400;
const ttlOf = (iso: string) => Math.floor(Date.parse(iso) / 1000) + DAY;

export const apiTokenAuthPut = (hash: string, auth: ApiTokenAuth): TxItem => ({
  Put: { TableName: tableName(), Item: { ...keys.apiTokenAuth(hash), ...auth, ttl: ttlOf(auth.expires_at) }, ConditionExpression: 'attribute_not_exists(pk)' },
});

export const apiTokenAuthDelete = (hash: string): TxItem => ({ Delete: { TableName: tableName(), Key: keys.apiTokenAuth(hash) } });

/** The old token of a rotation stays valid until `until` (the grace period), then is refused. */
export const apiTokenAuthGrace = (hash: string, until: string): TxItem => ({
  Update: {
    TableName: tableName(),
    Key: keys.apiTokenAuth(hash),
    UpdateExpression: 'SET valid_until = :u, #ttl = :ttl',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeNames: { '#ttl': 'ttl' },
    ExpressionAttributeValues: { ':u': until, ':ttl': ttlOf(until) },
  },
});

/** Verifies a presented token: 401 when unknown, expired, or past its rotation grace period. */
export async function authenticateApiToken(token: string, now = Date.now()): Promise<ApiTokenAuth> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.apiTokenAuth(hashApiToken(token)), ConsistentRead: true }));
  const auth = out.Item as ApiTokenAuth | undefined;
  if (!auth) throw unauthorized();
  if (Date.parse(auth.expires_at) <= now) throw unauthorized('API token has expired', 'credentials_expired');
  if (auth.valid_until !== undefined && Date.parse(auth.valid_until) <= now) throw unauthorized('API token was rotated: use the new token', 'credentials_expired');
  return auth;
}

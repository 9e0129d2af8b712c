import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../store/client.js';
import { keys } from '../store/keys.js';
import type { TxItem } from '../store/tx.js';

/**
 * The auth feature's store module (the one place its DynamoDB commands are built): sign-in
 * session state, personal API tokens' auth items, the device-authorization pointers and polls
 * (RFC 8628), and the accounts' token-signing keys. Keys come from lib/store/keys.ts.
 */

/**
 * Whether a sign-in session still admits its access tokens: one consistent GetItem, no
 * cache, so a sign-out or a revoked token family refuses the very next request. The bearer
 * path (lib/auth/jwt.ts) calls it for every access token that names a session (`sid`).
 */
type SessionState = 'active' | 'revoked' | 'expired' | 'missing';

export async function sessionState(tenantId: string, sessionId: string, now = Date.now()): Promise<SessionState> {
  const out = await db().send(
    new GetCommand({
      TableName: tableName(),
      Key: keys.session(tenantId, sessionId),
      ConsistentRead: true,
      ProjectionExpression: '#s, expires_at',
      ExpressionAttributeNames: { '#s': 'status' },
    }),
  );
  if (!out.Item) return 'missing';
  if (out.Item.status !== 'active') return 'revoked';
  return Date.parse(String(out.Item.expires_at)) > now ? 'active' : 'expired';
}

// --- personal API tokens (lib/auth/api-tokens.ts)

/** What authentication reads. */
export interface ApiTokenAuth {
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

/** The auth item of a personal API token's SHA-256, as stored. */
export async function readApiTokenAuth(hash: string): Promise<ApiTokenAuth | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.apiTokenAuth(hash), ConsistentRead: true }));
  return out.Item as ApiTokenAuth | undefined;
}

// --- device authorization (lib/auth/device-flow.ts)

/** The user-code pointer of an authorization: conditional on no live holder of the same code. */
export const userCodePointerPut = (key: { pk: string; sk: string }, codeHash: string, expiresAt: number): TxItem => ({
  Put: {
    TableName: tableName(),
    Item: { ...key, code_hash: codeHash, ttl: expiresAt },
    // a user code may be reused once its previous holder has expired
    ConditionExpression: 'attribute_not_exists(pk) OR #ttl < :now',
    ExpressionAttributeNames: { '#ttl': 'ttl' },
    ExpressionAttributeValues: { ':now': Math.floor(Date.now() / 1000) },
  },
});

/**
 * Records a poll of a pending authorization stored at `key` (optimistic on the previous poll
 * time, so two concurrent polls cannot both pass); `interval` is the new polling interval.
 * False when the record changed meanwhile.
 */
export async function recordPollAt(key: { pk: string; sk: string }, previous: number, at: number, interval: number): Promise<boolean> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: key,
        UpdateExpression: 'SET last_poll_at = :at, #interval = :interval',
        ConditionExpression: '#status = :pending AND last_poll_at = :prev',
        ExpressionAttributeNames: { '#status': 'status', '#interval': 'interval' },
        ExpressionAttributeValues: { ':at': at, ':interval': interval, ':pending': 'pending', ':prev': previous },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

/** A conditional status change of the authorization at `key`, with extra SET clauses. */
export function statusUpdate(key: { pk: string; sk: string }, from: string, set: Record<string, unknown>): TxItem {
  const names: Record<string, string> = { '#status': 'status' };
  const values: Record<string, unknown> = { ':from': from };
  const clauses = Object.entries(set).map(([k, v], i) => {
    names[`#f${i}`] = k;
    values[`:v${i}`] = v;
    return `#f${i} = :v${i}`;
  });
  return {
    Update: {
      TableName: tableName(),
      Key: key,
      UpdateExpression: `SET ${clauses.join(', ')}`,
      ConditionExpression: '#status = :from',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  };
}

/** Deletes a user-code pointer if it still points to this authorization (the code is single-use). */
export const userCodePointerDelete = (key: { pk: string; sk: string }, codeHash: string): TxItem => ({
  Delete: { TableName: tableName(), Key: key, ConditionExpression: 'code_hash = :c', ExpressionAttributeValues: { ':c': codeHash } },
});

// --- token-signing keys (lib/auth/jwt.ts)

/** Writes a new token-signing key (the public JWK as is, the private one sealed), listed in the authorization server's set. */
export async function putTokenKey(
  tenantId: string,
  kid: string,
  publicJwk: Record<string, unknown>,
  sealedPrivate: Uint8Array,
  createdAt: string,
  /** With its listing (the function's own credentials); without, the relay lists it (a tenant session). */
  listed = true,
): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...keys.tokenKey(tenantId, kid),
        ...(listed ? keys.tokenKeyIndex(kid) : {}),
        kid,
        public: publicJwk,
        private: sealedPrivate,
        created_at: createdAt,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
}

/**
 * A key written before the authorization server had its own set joins it (its listing,
 * keys.tokenKeyIndex) when it next signs. Best effort: a sign-in never fails for it, the
 * next one retries.
 */
export async function indexTokenKey(tenantId: string, kid: string): Promise<void> {
  const index = keys.tokenKeyIndex(kid);
  await db()
    .send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.tokenKey(tenantId, kid),
        UpdateExpression: 'SET platpk = :pk, platsk = :sk',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(platpk)',
        ExpressionAttributeValues: { ':pk': index.platpk, ':sk': index.platsk },
      }),
    )
    .catch(() => undefined);
}

/** One of an account's token-signing keys, as stored. */
export async function getTokenKey(tenantId: string, kid: string): Promise<Record<string, any> | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.tokenKey(tenantId, kid), ConsistentRead: true }));
  return out.Item;
}

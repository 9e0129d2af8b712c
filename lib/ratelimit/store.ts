import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../store/client.js';

/**
 * The ratelimit feature's store module (the one place its DynamoDB commands are built): the
 * conditional UpdateItems of a token bucket (lib/ratelimit/bucket.ts says the algorithm). A
 * bucket's attributes are named by `names` (`#ts`, `#tok`, `#cap`, `#ttl`); `counting` is the
 * `ADD requests :counted` clause when the bucket counts requests (`counted` its value).
 */
type Key = { pk: string; sk: string };
type Names = { '#ts': string; '#tok': string; '#cap': string; '#ttl': string };

/** Takes `n` tokens from a bucket refilled at second `ts` holding at least `n`; answers the item after (ALL_NEW). */
export async function takeTokens(key: Key, names: Names, counting: string, v: { n: number; ts: number; ttl: number; counted?: number }) {
  const out = await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: key,
      UpdateExpression: `SET #tok = #tok - :n, #ttl = if_not_exists(#ttl, :ttl)${counting}`,
      ConditionExpression: '#ts = :ts AND #tok >= :n',
      ExpressionAttributeNames: { '#ts': names['#ts'], '#tok': names['#tok'], '#ttl': names['#ttl'] },
      ExpressionAttributeValues: { ':n': v.n, ':ts': v.ts, ':ttl': v.ttl, ...(v.counted !== undefined ? { ':counted': v.counted } : {}) },
      ReturnValues: 'ALL_NEW',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    }),
  );
  return out;
}

/** Sets a bucket's refilled state: a compare-and-set on the state read (`old`), or the creation of a new bucket. */
export async function refill(
  key: Key,
  names: Names,
  counting: string,
  v: { ts: number; tok: number; cap: number; ttl: number; counted?: number },
  old: { ts: number; tok: number } | undefined,
): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: key,
      UpdateExpression: `SET #ts = :ts, #tok = :tok, #cap = :cap, #ttl = if_not_exists(#ttl, :ttl)${counting}`,
      ConditionExpression: old ? '#ts = :oldts AND #tok = :oldtok' : 'attribute_not_exists(#ts)',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: {
        ':ts': v.ts, ':tok': v.tok, ':cap': v.cap, ':ttl': v.ttl,
        ...(v.counted !== undefined ? { ':counted': v.counted } : {}),
        ...(old ? { ':oldts': old.ts, ':oldtok': old.tok } : {}),
      },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    }),
  );
}

/**
 * Adds `n` requests to an account's usage item, nothing else (the count a process admitted
 * from its leases and had not written yet, at the container's end: lib/ratelimit/bucket.ts
 * `flushUncounted`). The bucket's state is not touched; `ttl` only if the item has none.
 */
export async function addCount(key: Key, n: number, ttl: number): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: key,
      UpdateExpression: 'SET #ttl = if_not_exists(#ttl, :ttl) ADD requests :counted',
      ExpressionAttributeNames: { '#ttl': 'ttl' },
      ExpressionAttributeValues: { ':counted': n, ':ttl': ttl },
    }),
  );
}

/** The item a refused condition returned (ALL_OLD, unconverted: {attr: {N: "..."}}); undefined when `error` is no refused condition. */
export const refusedItem = (error: unknown): { item: Record<string, { N?: string }> | undefined } | undefined =>
  error instanceof ConditionalCheckFailedException ? { item: error.Item as Record<string, { N?: string }> | undefined } : undefined;

import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../store/client.js';
import { keys } from '../store/keys.js';

/**
 * The http feature's store module (the one place its DynamoDB commands are built): the
 * idempotency items `IDEM#<hash>` of lib/http/idempotency.ts. Keys come from lib/store/keys.ts.
 */

/** Holds an idempotency key for a request (state pending, its fingerprint); false while a live item holds it already. */
export async function holdIdempotencyKey(tenantId: string, id: string, fingerprint: string, now: number, ttlSeconds: number): Promise<boolean> {
  try {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.idempotency(tenantId, id), state: 'pending', fingerprint, ttl: now + ttlSeconds },
        ConditionExpression: 'attribute_not_exists(pk) OR #ttl < :now',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':now': now },
      }),
    );
    return true;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    return false;
  }
}

export async function readIdempotencyItem(tenantId: string, id: string): Promise<Record<string, unknown> | undefined> {
  return (await db().send(new GetCommand({ TableName: tableName(), Key: keys.idempotency(tenantId, id), ConsistentRead: true }))).Item;
}

/** The request is done: its (sealed) response is kept for replays. */
export async function recordIdempotentResponse(tenantId: string, id: string, sealedResponse: Uint8Array): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.idempotency(tenantId, id),
      UpdateExpression: 'SET #s = :done, #r = :r',
      ExpressionAttributeNames: { '#s': 'state', '#r': 'response' },
      ExpressionAttributeValues: { ':done': 'done', ':r': sealedResponse },
    }),
  );
}

export async function deleteIdempotencyItem(tenantId: string, id: string): Promise<void> {
  await db().send(new DeleteCommand({ TableName: tableName(), Key: keys.idempotency(tenantId, id) }));
}

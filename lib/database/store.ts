import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../store/client.js';
import { keys } from '../store/keys.js';

/**
 * The database feature's store module (the one place its DynamoDB commands are built outside
 * transactions): the leases `LEASE#<id>` (lib/database/leases.ts) and the rotation locks
 * `ROTLOCK#<connection>` (lib/database/rotate.ts). Keys come from lib/store/keys.ts.
 */

/** A lease item, as stored (lib/database/leases.ts reads it into a LeaseRecord). */
export async function readLeaseItem(tenantId: string, id: string): Promise<Record<string, unknown> | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.lease(tenantId, id), ConsistentRead: true }));
  return out.Item;
}

/** Deletes a lease that never became active (pending or failed); refused for any other status. */
export async function deleteUnfinishedLease(tenantId: string, id: string): Promise<void> {
  await db().send(
    new DeleteCommand({
      TableName: tableName(),
      Key: keys.lease(tenantId, id),
      ConditionExpression: '#s IN (:p, :f)',
      ExpressionAttributeNames: { '#s': 'status' },
      ExpressionAttributeValues: { ':p': 'pending', ':f': 'failed' },
    }),
  );
}

/** Takes a connection's rotation lock for `owner` (`now`: epoch seconds); false while another live holder has it. */
export async function takeRotationLock(tenantId: string, connectionId: string, owner: string, now: number, lockSeconds: number): Promise<boolean> {
  try {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.rotationLock(tenantId, connectionId), owner, lock_expires: now + lockSeconds, ttl: now + 3600 },
        ConditionExpression: 'attribute_not_exists(pk) OR lock_expires < :now',
        ExpressionAttributeValues: { ':now': now },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

export async function releaseLock(tenantId: string, connectionId: string, owner: string): Promise<void> {
  await db()
    .send(
      new DeleteCommand({
        TableName: tableName(),
        Key: keys.rotationLock(tenantId, connectionId),
        ConditionExpression: '#o = :o',
        ExpressionAttributeNames: { '#o': 'owner' },
        ExpressionAttributeValues: { ':o': owner },
      }),
    )
    .catch(() => undefined); // expired and taken over, or gone: nothing to release
}

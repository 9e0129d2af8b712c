import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../store/client.js';
import { keys } from '../store/keys.js';

/**
 * The crypto feature's store module (the one place its DynamoDB commands are built): each
 * account's wrapped data key `DEK` (lib/crypto/envelope.ts). Keys come from lib/store/keys.ts.
 */
export async function readDataKey(tenantId: string): Promise<Record<string, unknown> | undefined> {
  return (await db().send(new GetCommand({ TableName: tableName(), Key: keys.dataKey(tenantId), ConsistentRead: true }))).Item;
}

/** Writes an account's first data key; a concurrent writer's first key wins (isConditionFailure). */
export async function putDataKey(tenantId: string, fields: Record<string, unknown>): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...keys.dataKey(tenantId), ...fields },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
}

/** Whether a write was refused by its condition (another writer was first). */
export const isConditionFailure = (error: unknown): boolean => error instanceof ConditionalCheckFailedException;

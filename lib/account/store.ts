import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../store/client.js';

/**
 * The account feature's store module (the one place its DynamoDB commands are built): the CLI sync's read of an
 * item its audit trail or index named.
 * Keys come from lib/store/keys.ts.
 */

/** The item at `key`, read consistently; undefined when it is gone. */
export async function readAt(key: { pk: string; sk: string }): Promise<Record<string, unknown> | undefined> {
  return (await db().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }))).Item;
}

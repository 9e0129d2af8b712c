import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../store/client.js';

/**
 * The events feature's store module (the one place its DynamoDB commands are built, with
 * lib/events/webhooks.ts pending): the outbox items the relay reads and removes
 * (lib/events/relay.ts; lib/outbox/outbox.ts writes them).
 */
export async function readOutboxItem(key: { pk: string; sk: string }): Promise<Record<string, unknown> | undefined> {
  return (await db().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }))).Item;
}

export async function deleteOutboxItem(key: { pk: string; sk: string }): Promise<void> {
  await db().send(new DeleteCommand({ TableName: tableName(), Key: key }));
}

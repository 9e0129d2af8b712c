import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../store/client.js';
import { keys } from '../store/keys.js';

/**
 * The containers feature's store module (the one place its DynamoDB commands are built): the name lookup `CNAME#<name>`
 * of a container (the container itself is a resource: lib/resources/store.ts).
 * Keys come from lib/store/keys.ts.
 */

/** The id of the container named `name`, if any (a consistent read of its name lookup). */
export async function containerIdByName(tenantId: string, name: string): Promise<string | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.containerName(tenantId, name), ConsistentRead: true }));
  return out.Item?.id as string | undefined;
}

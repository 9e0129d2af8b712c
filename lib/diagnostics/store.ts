import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../store/client.js';
import { keys } from '../store/keys.js';

/**
 * The diagnostics feature's store module (the one place its DynamoDB commands are built): the health probe's read.
 * Keys come from lib/store/keys.ts.
 */

/** One projected read of the caller's account item: resolves when the table answers. */
export async function probeAccountItem(tenantId: string): Promise<void> {
  await db().send(new GetCommand({ TableName: tableName(), Key: keys.tenant(tenantId), ProjectionExpression: 'pk' }));
}

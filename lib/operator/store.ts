import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../store/client.js';
import { keys } from '../store/keys.js';

/**
 * The operator feature's store module (the one place its DynamoDB commands are built): the operator mark (the ids
 * of the operator accounts).
 * Keys come from lib/store/keys.ts.
 */

/** The operator mark, as stored; undefined before the first operator account. */
export async function readOperatorMark(): Promise<Record<string, unknown> | undefined> {
  return (await db().send(new GetCommand({ TableName: tableName(), Key: keys.operatorMark(), ConsistentRead: true }))).Item;
}

import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../store/client.js';

/**
 * Spends a single-use item (a sign-in challenge, an OIDC state): one conditional
 * DeleteItem returning the item, so of two requests presenting it only one gets it.
 * Undefined when it does not exist (unknown, already spent, or removed by TTL).
 */
export async function spend(key: { pk: string; sk: string }): Promise<Record<string, unknown> | undefined> {
  try {
    const out = await db().send(
      new DeleteCommand({ TableName: tableName(), Key: key, ReturnValues: 'ALL_OLD', ConditionExpression: 'attribute_exists(pk)' }),
    );
    return out.Attributes;
  } catch (error) {
    if ((error as { name?: string }).name === 'ConditionalCheckFailedException') return undefined;
    throw error;
  }
}

import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { nowIso } from '../ids.js';
import { db, tableName } from '../store/client.js';
import { keys } from '../store/keys.js';

/**
 * The federation feature's store module (the one place its DynamoDB commands are built): the
 * SAML replay marks `SAMLREPLAY#<hash>`; its other records are items of lib/resources/items.ts.
 * Keys come from lib/store/keys.ts.
 */

/** Marks an assertion (by the hash of its issuer and id) seen until `until`; false when it was seen before (a replay). */
export async function markAssertionSeen(tenantId: string, hash: string, until: Date): Promise<boolean> {
  try {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: {
          ...keys.samlReplay(tenantId, hash),
          expires_at: until.toISOString(),
          first_seen_at: nowIso(),
          ttl: Math.ceil(until.getTime() / 1000) + 3600,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

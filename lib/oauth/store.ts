import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../store/client.js';
import { keys } from '../store/keys.js';

/**
 * The oauth feature's store module (the one place its DynamoDB commands are built outside
 * transactions): the used client-assertion ids `JWTREPLAY#<hash>`, the consent tickets
 * `OAUTHTICKET#<hash>` and the authorization codes `OAUTHCODE#<hash>` of lib/oauth/server.ts.
 * Keys come from lib/store/keys.ts.
 */

/** Marks a client assertion's jti used until `ttl` (RFC 7523 §3); false when it was used before. */
export async function markAssertionUsed(tenantId: string, hash: string, ttl: number): Promise<boolean> {
  try {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.jwtReplay(tenantId, hash), ttl },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return true;
  } catch (error) {
    if ((error as { name?: string }).name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

/** Writes a consent ticket (by its hash) with its fields. */
export async function putConsentTicket(hash: string, fields: Record<string, unknown>): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...keys.oauthTicket(hash),
        ...fields,
      },
    }),
  );
}

/** Writes a new authorization code (by its hash) with its fields. */
export async function putAuthorizationCode(hash: string, fields: Record<string, unknown>): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...keys.oauthCode(hash),
        ...fields,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
}

import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { nowIso } from '../ids.js';
import { db, tableName } from '../store/client.js';
import { keys } from '../store/keys.js';

/**
 * The certificates feature's store module (the one place its DynamoDB commands are built):
 * the pending ACME http-01 challenges `ACME#<token>` (lib/certificates/acme.ts); certificates
 * themselves are resources (lib/resources/store.ts). Keys come from lib/store/keys.ts.
 */

export async function putChallenge(token: string, tenantId: string, keyAuthorization: string, ttlSeconds: number): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...keys.acmeChallenge(token),
        tenant_id: tenantId,
        key_authorization: keyAuthorization,
        created_at: nowIso(),
        ttl: Math.floor(Date.now() / 1000) + ttlSeconds,
      },
    }),
  );
}

export async function deleteChallenge(token: string): Promise<void> {
  await db().send(new DeleteCommand({ TableName: tableName(), Key: keys.acmeChallenge(token) }));
}

export async function readChallenge(token: string): Promise<Record<string, unknown> | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.acmeChallenge(token), ConsistentRead: true }));
  return out.Item;
}

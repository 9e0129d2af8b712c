import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../store/client.js';
import { keys } from '../store/keys.js';

/**
 * The sso feature's store module (the one place its DynamoDB commands are built): an account's
 * single sign-on configuration `SSO` (lib/sso/config.ts parses it) and the sign-in states
 * `OIDCSTATE#<hash>` (lib/sso/oidc.ts; spent by lib/users/store.ts's spend). Keys come from lib/store/keys.ts.
 */
export async function readSsoConfigItem(tenantId: string): Promise<Record<string, unknown> | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.ssoConfig(tenantId), ConsistentRead: true }));
  return out.Item;
}

/** Writes a new sign-in state (by the state's hash) with its fields. */
export async function putOidcState(stateHash: string, fields: Record<string, unknown>): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...keys.oidcState(stateHash),
        ...fields,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
}

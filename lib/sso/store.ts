import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../store/client.js';
import { keys } from '../store/keys.js';

/**
 * The sso feature's store module (the one place its DynamoDB commands are built): an account's
 * single sign-on configuration `SSO` (lib/sso/config.ts parses it). Keys come from lib/store/keys.ts.
 */
export async function readSsoConfigItem(tenantId: string): Promise<Record<string, unknown> | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.ssoConfig(tenantId), ConsistentRead: true }));
  return out.Item;
}

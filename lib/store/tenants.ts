import { GetCommand, BatchGetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { badRequest } from '../http/errors.js';
import { db, tableName } from './client.js';
import { keys } from './keys.js';
import { chunk } from './util.js';

export type TenantStatus = 'active' | 'suspended';

/** Quota values; absent = unlimited. */
export interface Quota {
  readonly max_secrets?: number;
  readonly max_api_keys?: number;
  readonly max_webhooks?: number;
  readonly max_devices?: number;
  readonly requests_per_minute?: number;
  /** Per credential (API key, token, device) within the account; absent = the account's rate. */
  readonly requests_per_minute_per_credential?: number;
}

export const DEFAULT_QUOTA: Quota = { max_secrets: 10_000, max_api_keys: 100, max_webhooks: 25, max_devices: 1_000, requests_per_minute: 6_000 };

export interface Tenant {
  readonly id: string;
  readonly name: string;
  readonly admin_email: string;
  readonly status: TenantStatus;
  /** A platform-operator account: its admin keys may use the operator routes. */
  readonly operator: boolean;
  readonly quota: Quota;
  /** Account settings set with PUT /api/v1/settings (lib/settings/settings.ts); absent = defaults. */
  readonly settings?: Readonly<Record<string, unknown>>;
  readonly created_at: string;
  readonly updated_at: string;
}

const FIELDS = ['id', 'name', 'admin_email', 'status', 'operator', 'quota', 'settings', 'created_at', 'updated_at'] as const;

export const toTenant = (item: Record<string, unknown>): Tenant =>
  Object.fromEntries(FIELDS.map((f) => [f, item[f]])) as unknown as Tenant;

export async function getTenant(tenantId: string): Promise<Tenant | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.tenant(tenantId), ConsistentRead: true }));
  return out.Item ? toTenant(out.Item) : undefined;
}

function decodeTenantCursor(cursor: string): Record<string, string> {
  try {
    const key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Record<string, unknown>;
    const { pk, sk, gsi1pk, gsi1sk } = key;
    if ([pk, sk, gsi1sk].every((v) => typeof v === 'string') && gsi1pk === 'TENANTS' && Object.keys(key).length === 4) {
      return key as Record<string, string>;
    }
  } catch {
    // fall through
  }
  throw badRequest('invalid cursor', [{ path: 'query.cursor', message: 'not a cursor returned by this list' }]);
}

/** Tenants in creation order, through the TENANTS index (keys only) and a batch read. */
export async function listTenants(limit: number, after?: string): Promise<{ tenants: Tenant[]; cursor?: string }> {
  const page = await db().send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :p',
      ExpressionAttributeValues: { ':p': 'TENANTS' },
      Limit: limit,
      ...(after ? { ExclusiveStartKey: decodeTenantCursor(after) } : {}),
    }),
  );
  const ids = (page.Items ?? []).map((i) => i.pk as string);
  const found = new Map<string, Tenant>();
  for (const part of chunk(ids, 100)) {
    let request: Record<string, { Keys: Record<string, unknown>[] }> | undefined = {
      [tableName()]: { Keys: part.map((pk) => ({ pk, sk: 'TENANT' })) },
    };
    while (request && Object.keys(request).length > 0) {
      const out = await db().send(new BatchGetCommand({ RequestItems: request as never }));
      for (const item of out.Responses?.[tableName()] ?? []) found.set(item.pk as string, toTenant(item));
      request = out.UnprocessedKeys as typeof request;
    }
  }
  return {
    tenants: ids.map((pk) => found.get(pk)).filter((t): t is Tenant => t !== undefined),
    cursor: page.LastEvaluatedKey ? Buffer.from(JSON.stringify(page.LastEvaluatedKey)).toString('base64url') : undefined,
  };
}

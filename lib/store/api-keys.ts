import * as z from 'zod/v4';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.js';
import { entity, nullable } from './entity.js';
import { keys } from './keys.js';
import { queryAll } from './pagination.js';
import type { TxItem } from './tx.js';

/** What authentication reads: one consistent GetItem by the key's hash. */
interface ApiKeyAuth {
  readonly tenant_id: string;
  readonly key_id: string;
  readonly scopes: string[];
  readonly created_by: string | null;
  readonly expires_at: string | null;
}

const ApiKeyAuthItem = entity(
  'API key auth',
  z.looseObject({
    tenant_id: z.string(),
    key_id: z.string(),
    scopes: z.array(z.string()),
    created_by: nullable(z.string()),
    expires_at: nullable(z.string()),
  }),
);

/** What listings show: never the key or its hash. */
export interface ApiKeyMeta {
  readonly id: string;
  readonly name: string;
  readonly prefix: string;
  readonly scopes: string[];
  readonly status: 'active' | 'revoked';
  readonly created_at: string;
  readonly created_by: string | null;
  readonly expires_at: string | null;
  readonly revoked_at: string | null;
}

const ApiKeyItem = entity(
  'API key',
  z.object({
    id: z.string(),
    name: z.string(),
    prefix: z.string(),
    scopes: z.array(z.string()),
    status: z.enum(['active', 'revoked']),
    created_at: z.string(),
    created_by: nullable(z.string()),
    expires_at: nullable(z.string()),
    revoked_at: nullable(z.string()),
  }),
);
const toMeta = (item: Record<string, unknown>): ApiKeyMeta => ApiKeyItem.parse(item);

export async function getApiKeyAuth(hash: string): Promise<ApiKeyAuth | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.apiKeyAuth(hash), ConsistentRead: true }));
  return out.Item ? ApiKeyAuthItem.parse(out.Item) : undefined;
}

/** The two items of a new key: the tenant's metadata item and the auth item, both new. */
export function apiKeyPuts(tenantId: string, meta: ApiKeyMeta, hash: string): TxItem[] {
  return [
    {
      Put: {
        TableName: tableName(),
        Item: { ...keys.apiKey(tenantId, meta.id), ...meta, hash },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    {
      Put: {
        TableName: tableName(),
        Item: {
          ...keys.apiKeyAuth(hash),
          tenant_id: tenantId,
          key_id: meta.id,
          scopes: meta.scopes,
          created_by: meta.created_by,
          expires_at: meta.expires_at,
        } satisfies ApiKeyAuth & Record<string, unknown>,
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
  ];
}

export async function getApiKey(tenantId: string, keyId: string): Promise<(ApiKeyMeta & { hash: string }) | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.apiKey(tenantId, keyId), ConsistentRead: true }));
  return out.Item ? { ...toMeta(out.Item), hash: out.Item.hash as string } : undefined;
}

export async function listApiKeys(tenantId: string): Promise<ApiKeyMeta[]> {
  return (await queryAll({ pk: keys.tenant(tenantId).pk, sk: { prefix: keys.apiKeyPrefix } })).map(toMeta);
}

/** Revocation: the auth item is deleted (the next request fails), the metadata kept. */
export function apiKeyRevokeItems(tenantId: string, keyId: string, hash: string, at: string): TxItem[] {
  return [
    {
      Update: {
        TableName: tableName(),
        Key: keys.apiKey(tenantId, keyId),
        UpdateExpression: 'SET #s = :revoked, revoked_at = :at',
        ConditionExpression: '#s = :active',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':revoked': 'revoked', ':active': 'active', ':at': at },
      },
    },
    { Delete: { TableName: tableName(), Key: keys.apiKeyAuth(hash) } },
  ];
}

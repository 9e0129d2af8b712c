import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { notFound } from '../http/errors.js';
import { resourceType, type ResourceType } from '../resource-types.js';
import { db, tableName } from '../store/client.js';
import { keys, tenantPk } from '../store/keys.js';
import { toRecord, type ResourceRecord } from '../store/resources.js';

/**
 * Any resource's head by type and id, for the cross-type routes (`/api/v1/{type}/{id}/...`,
 * shares, temporary access, lookup). Every type in lib/resource-types.ts keeps its head at
 * `R#<type>#<id>` (lib/store/resources.ts) except the generic secret, whose head is keyed by
 * name (`SECRET#<name>`) and found by id through gsi1 `RES#<id>` (keys only), then read
 * consistently. The secret's head is presented in the same record shape, its description
 * and tags as `meta`.
 */
export interface Head {
  readonly record: ResourceRecord;
  readonly sealed: Uint8Array | undefined;
  /** The head item's key (for conditional updates of the head). */
  readonly key: { readonly pk: string; readonly sk: string };
  /** The stored head item as is (its `value` sealed). */
  readonly item: Record<string, unknown>;
}

/** The registry entry of a `{type}` path segment; an unknown type is a 404. */
export function typeOrNotFound(type: string): ResourceType {
  const rt = resourceType(type);
  if (!rt) throw notFound('resource type');
  return rt;
}

export function secretToRecord(item: Record<string, unknown>): ResourceRecord {
  return {
    type: 'secret',
    id: item.id as string,
    name: item.name as string,
    version: item.version as number,
    meta: { description: (item.description as string | undefined) ?? '', tags: (item.tags as string[] | undefined) ?? [] },
    container_id: (item.container_id as string | null | undefined) ?? null,
    created_at: item.created_at as string,
    updated_at: item.updated_at as string,
    created_by: (item.created_by as string | null | undefined) ?? null,
    updated_by: (item.updated_by as string | null | undefined) ?? null,
    ...(item.keep_versions !== undefined ? { keep_versions: item.keep_versions as number } : {}),
  };
}

/** The key of a generic secret's head by id (gsi1 `RES#<id>`), if it exists. */
async function secretHeadKey(tenantId: string, id: string): Promise<{ pk: string; sk: string } | undefined> {
  const out = await db().send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk = :sk',
      ExpressionAttributeValues: { ':pk': tenantPk(tenantId), ':sk': `RES#${id}` },
    }),
  );
  const hit = (out.Items ?? []).find((i) => String(i.sk).startsWith(keys.secretPrefix));
  return hit ? { pk: hit.pk as string, sk: hit.sk as string } : undefined;
}

/** A resource's head in a tenant, or undefined when it does not exist there. */
export async function readHead(tenantId: string, type: string, id: string): Promise<Head | undefined> {
  const key = type === 'secret' ? await secretHeadKey(tenantId, id) : keys.resource(tenantId, type, id);
  if (!key) return undefined;
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }));
  const item = out.Item;
  // the index may lag behind a delete-and-recreate: the head must still carry this id
  if (!item || item.id !== id) return undefined;
  return { record: type === 'secret' ? secretToRecord(item) : toRecord(item), sealed: item.value as Uint8Array | undefined, key, item };
}

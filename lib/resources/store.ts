import * as z from 'zod/v4';
import { BatchGetCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { CallContext } from '../auth/principal.js';
import { commit, type Change } from '../audit/audit.js';
import { openJson, sealJson, type SealScope } from '../crypto/envelope.js';
import { conflict, notFound, preconditionFailed } from '../core/errors.js';
import { newId, nowIso } from '../ids.js';
import { db, tableName } from '../store/client.js';
import { entity, nullable } from '../store/entity.js';
import { keys, NAME_INDEXED } from '../store/keys.js';
import { type Item, queryAll, queryPage } from '../store/pagination.js';
import { membershipFailure, pushMembership } from '../store/membership.js';
import { TxConditionFailed, type TxItem } from '../store/tx.js';

/**
 * The one storage module of every versioned, tenant-owned resource: typed credentials,
 * passwords, keys, certificates, containers, ... (the generic secret shares its version,
 * ETag and pruning rules). A head item `R#<type>#<id>` holds public metadata and the
 * current secret part sealed; each write also puts an immutable version item
 * `V#<type>#<id>#<n>`, and versions beyond the kept count are pruned in the same
 * transaction. Secret parts are sealed with AAD (tenant, type, id, version), so a sealed
 * value copied to another item, version or tenant does not open.
 */
export const DEFAULT_KEEP_VERSIONS = 10;

export interface ResourceRecord<M = Record<string, unknown>> {
  readonly type: string;
  readonly id: string;
  readonly name: string;
  readonly version: number;
  /** Public metadata: shown in lists and to callers without read rights to the secret part. */
  readonly meta: M;
  readonly container_id: string | null;
  readonly created_at: string;
  readonly updated_at: string;
  readonly created_by: string | null;
  readonly updated_by: string | null;
  /** Versions kept for this resource (history settings); default DEFAULT_KEEP_VERSIONS. */
  readonly keep_versions?: number;
}

interface VersionRecord<M = Record<string, unknown>> {
  readonly type: string;
  readonly id: string;
  readonly name: string;
  readonly version: number;
  readonly meta: M;
  readonly created_at: string;
  readonly created_by: string | null;
  readonly has_secret: boolean;
}

/**
 * The entities of the store, declared once: the head item and the version item, each a zod
 * schema checked on every read (a stored item that does not match is an internal error,
 * never a half-read record). The type's own fields in `meta` are checked by its schemas on
 * write (lib/credentials/types/, the key families).
 */
const Meta = z.record(z.string(), z.unknown()).default({});
const Actor = nullable(z.string());
const Head = z.object({
  type: z.string(),
  id: z.string(),
  name: z.string(),
  version: z.number().int().positive(),
  meta: Meta,
  container_id: nullable(z.string()),
  created_at: z.string(),
  updated_at: z.string(),
  created_by: Actor,
  updated_by: Actor,
  keep_versions: z.number().int().positive().optional(),
});
const HeadItem = entity('resource head', Head);
const VersionItem = entity(
  'resource version',
  Head.pick({ type: true, id: true, name: true, version: true, meta: true, created_at: true, created_by: true }),
);

const RECORD_FIELDS = HeadItem.fields;

/** A head item as a record: the one place an item of the store becomes a record. */
export const toRecord = <M>(item: Record<string, unknown>): ResourceRecord<M> => HeadItem.parse(item) as ResourceRecord<M>;

const toVersion = <M>(item: Record<string, unknown>): VersionRecord<M> => ({
  ...(VersionItem.parse(item) as Omit<VersionRecord<M>, 'has_secret'>),
  has_secret: item.value !== undefined,
});

export const sealScope = (tenantId: string, type: string, id: string, version: number): SealScope => ({ tenantId, type, id, version });

/** Who wrote: the user the credential acts for, else the credential itself. */
export const actorName = (ctx: CallContext) => ctx.principal.user ?? `${ctx.principal.kind}:${ctx.principal.id}`;

/** Strong ETag of one version of one resource: a recreated resource never matches an old tag. */
export const etagOf = (r: { id: string; version: number }) => `"${r.id}.${r.version}"`;

/**
 * `If-Match` against the current head: absent → the resource must exist (404); a tag for a
 * missing resource or a malformed tag cannot hold (412); a well-formed older tag is stale
 * (409); `*` matches any version.
 */
export function checkIfMatch(ifMatch: string | undefined, head: { id: string; version: number } | undefined, what = 'resource'): void {
  if (ifMatch === undefined) {
    if (!head) throw notFound(what);
    return;
  }
  const tags = ifMatch.split(',').map((t) => t.trim());
  if (!head) throw preconditionFailed(`If-Match given for a ${what} that does not exist`);
  if (tags.includes('*')) return;
  const bad = tags.find((t) => !/^"[0-9a-f-]{36}\.\d+"$/.test(t));
  if (bad !== undefined)
    throw preconditionFailed(
      `malformed ETag in If-Match: expected the ETag header of a GET, "<id>.<version>" with its quotes (e.g. ${etagOf(head)}), or *; got ${JSON.stringify(bad.slice(0, 80))}`,
    );
  if (!tags.includes(etagOf(head))) throw conflict(`stale ETag: the ${what} has changed; read it again before retrying`, 'stale_etag');
}

/** The immutable version item of a write. */
function versionPut(tenantId: string, rec: ResourceRecord<unknown>, sealed: Uint8Array | undefined): TxItem {
  return {
    Put: {
      TableName: tableName(),
      Item: {
        ...keys.version(tenantId, rec.type, rec.id, rec.version),
        type: rec.type,
        id: rec.id,
        name: rec.name,
        version: rec.version,
        meta: rec.meta,
        created_at: rec.updated_at,
        created_by: rec.updated_by,
        ...(sealed ? { value: sealed } : {}),
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
}

/** Deletes of the versions that fall out of the kept window when `rec.version` is written. */
function pruneDeletes(
  tenantId: string,
  rec: Pick<ResourceRecord<unknown>, 'type' | 'id' | 'version' | 'keep_versions'>,
  previousKeep?: number,
): TxItem[] {
  const keep = rec.keep_versions ?? DEFAULT_KEEP_VERSIONS;
  const oldestKept = rec.version - keep + 1;
  // When the kept count shrank, more than one version may fall out at once.
  const from = Math.max(1, rec.version - Math.max(keep, previousKeep ?? keep));
  const out: TxItem[] = [];
  for (let v = from; v < oldestKept; v++) out.push({ Delete: { TableName: tableName(), Key: keys.version(tenantId, rec.type, rec.id, v) } });
  return out;
}

/*
 * Container placement is not a bare check of the container: create, update and delete keep
 * the container's membership (member item + count) in their own transaction through
 * lib/store/membership.ts (pushMembership / membershipFailure), so a non-empty container
 * cannot be deleted and a key names one resource per container. Writers of their own
 * transactions that set a container_id must call pushMembership too.
 */

export interface StoredResource<M> {
  readonly record: ResourceRecord<M>;
  readonly sealed: Uint8Array | undefined;
}

/** A head read with its key (for conditional updates of the head) and the item as stored. */
export interface StoredHead<M> extends StoredResource<M> {
  readonly key: { readonly pk: string; readonly sk: string };
  readonly item: Record<string, unknown>;
}

async function getHead<M>(key: { pk: string; sk: string }, id?: string): Promise<StoredHead<M> | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }));
  // a name-indexed head found through the id index may since have been deleted and re-created
  if (!out.Item || (id !== undefined && out.Item.id !== id)) return undefined;
  return { record: toRecord<M>(out.Item), sealed: out.Item.value as Uint8Array | undefined, key, item: out.Item };
}

/**
 * A resource's head by type and id. A name-indexed type's head is found through gsi1
 * `RES#<id>` (keys only), then read consistently; every other head is one GetItem.
 */
export async function readResource<M>(tenantId: string, type: string, id: string): Promise<StoredHead<M> | undefined> {
  if (!NAME_INDEXED.has(type)) return getHead<M>(keys.resource(tenantId, type, id));
  const index = keys.resourceIndex(tenantId, id);
  const entries = await queryAll({ pk: index.gsi1pk, index: 'gsi1', sk: { equals: index.gsi1sk } });
  const hit = entries.find((e) => String(e.sk).startsWith(keys.headPrefix(type)));
  return hit ? getHead<M>({ pk: hit.pk as string, sk: hit.sk as string }, id) : undefined;
}

/**
 * The head of any resource of a tenant by id, whatever its type: the `RES#<id>` entry of
 * gsi1 (keys only), then the head with a consistent read. The index is eventually
 * consistent, so a miss falls back to one consistent BatchGetItem of `R#<type>#<id>` over
 * the candidate types (not possible for name-indexed ones). Another tenant's id is not found.
 */
export async function findHeadById(tenantId: string, id: string, candidateTypes: readonly string[]): Promise<Record<string, unknown> | undefined> {
  const index = keys.resourceIndex(tenantId, id);
  for (const entry of await queryAll({ pk: index.gsi1pk, index: 'gsi1', sk: { equals: index.gsi1sk } })) {
    if (entry.pk !== keys.tenant(tenantId).pk) continue;
    const head = await getHead({ pk: entry.pk as string, sk: entry.sk as string }, id);
    if (head) return head.item;
  }
  const typed = candidateTypes.filter((t) => !NAME_INDEXED.has(t));
  if (typed.length === 0) return undefined;
  const out = await db().send(
    new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: typed.map((t) => keys.resource(tenantId, t, id)), ConsistentRead: true } } }),
  );
  return out.Responses?.[tableName()]?.find((i) => i.id === id);
}

/** A name-indexed resource's head by its name (one GetItem). */
export const readResourceByName = <M>(tenantId: string, type: string, name: string) => getHead<M>(keys.head(tenantId, type, '', name));

/** Opens the secret part of a head or version. */
export async function openSecret<S>(
  tenantId: string,
  rec: { type: string; id: string; version: number },
  sealed: Uint8Array | undefined,
): Promise<S | undefined> {
  if (!sealed) return undefined;
  return openJson<S>(sealScope(tenantId, rec.type, rec.id, rec.version), sealed);
}

export async function listResources<M>(tenantId: string, type: string, page: { limit: number; offset?: number; cursor?: string }) {
  const out = await queryPage<Record<string, unknown>>({
    pk: keys.tenant(tenantId).pk,
    prefix: keys.headPrefix(type),
    limit: page.limit,
    offset: page.offset,
    cursor: page.cursor,
    projection: RECORD_FIELDS,
  });
  return { items: out.items.map((i) => toRecord<M>(i)), nextCursor: out.nextCursor };
}

/** Every kept version of a resource, newest first (metadata only). */
export async function listVersions<M>(tenantId: string, type: string, id: string): Promise<VersionRecord<M>[]> {
  const items = await queryAll({ pk: keys.tenant(tenantId).pk, sk: { prefix: keys.versionPrefix(type, id) }, newestFirst: true });
  return items.map((i) => toVersion<M>(i));
}

export async function readVersion<M>(
  tenantId: string,
  type: string,
  id: string,
  version: number,
): Promise<{ record: VersionRecord<M>; sealed: Uint8Array | undefined } | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.version(tenantId, type, id, version), ConsistentRead: true }));
  const i = out.Item;
  if (!i) return undefined;
  return { record: toVersion<M>(i), sealed: i.value as Uint8Array | undefined };
}

/** The keys of every version item of a resource (for deletes). */
export async function versionKeys(tenantId: string, type: string, id: string): Promise<Record<string, string>[]> {
  const items = await queryAll({ pk: keys.tenant(tenantId).pk, sk: { prefix: keys.versionPrefix(type, id) }, projection: [] });
  return items.map((i) => ({ pk: i.pk as string, sk: i.sk as string }));
}

interface CreateInput<M, S> {
  readonly type: string;
  readonly name: string;
  readonly meta: M;
  /** The secret part, sealed; omitted for resources without one. */
  readonly secret?: S;
  readonly container_id?: string | null;
  readonly id?: string;
}

const headPut = (
  tenantId: string,
  rec: ResourceRecord<unknown>,
  sealed: Uint8Array | undefined,
  condition: Pick<NonNullable<TxItem['Put']>, 'ConditionExpression' | 'ExpressionAttributeValues'>,
): TxItem => ({
  Put: {
    TableName: tableName(),
    Item: {
      ...keys.head(tenantId, rec.type, rec.id, rec.name),
      ...keys.resourceIndex(tenantId, rec.id),
      ...rec,
      ...(sealed ? { value: sealed } : {}),
    },
    ...condition,
  },
});

/**
 * Creates a resource: head, version 1, optional container check, the caller's extra items,
 * audit and event in one transaction. `change` builds the audit/event from the record.
 */
export async function createResource<M, S>(
  ctx: CallContext,
  input: CreateInput<M, S>,
  change: (rec: ResourceRecord<M>) => Change,
  extraItems: TxItem[] = [],
): Promise<ResourceRecord<M>> {
  const tid = ctx.principal.tenantId;
  const at = nowIso();
  const rec: ResourceRecord<M> = {
    type: input.type,
    id: input.id ?? newId(),
    name: input.name,
    version: 1,
    meta: input.meta,
    container_id: input.container_id ?? null,
    created_at: at,
    updated_at: at,
    created_by: actorName(ctx),
    updated_by: actorName(ctx),
  };
  const sealed = input.secret === undefined ? undefined : await sealJson(sealScope(tid, rec.type, rec.id, 1), input.secret);
  const items: TxItem[] = [headPut(tid, rec, sealed, { ConditionExpression: 'attribute_not_exists(pk)' }), versionPut(tid, rec, sealed)];
  // container membership (lib/store/membership.ts): the container must exist, the name be free in it
  const placed = pushMembership(tid, items, null, rec);
  const extraFrom = items.length;
  items.push(...extraItems);
  try {
    await commit(ctx, tid, items, change(rec));
  } catch (error) {
    membershipFailure(error, placed, rec);
    if (error instanceof TxConditionFailed) {
      if (error.index >= extraFrom && error.index < items.length) throw new TxConditionFailed(error.index - extraFrom, false);
      if (error.index === 0)
        throw conflict(
          NAME_INDEXED.has(rec.type) ? `a ${label(rec.type)} named "${rec.name}" already exists` : `${rec.type} ${rec.id} already exists`,
          'already_exists',
        );
      if (error.conflict) throw conflict(`a ${label(rec.type)} named "${rec.name}" is being created concurrently`, 'already_exists');
    }
    throw error;
  }
  return rec;
}

/** Options of updates and deletes: If-Match, the caller's extra items, and for a write through a share the owner's tenant and the head already read. */
interface WriteOptions<M> {
  readonly ifMatch?: string;
  readonly extraItems?: TxItem[];
  /** The account that owns the resource (a share recipient writes into the owner's). */
  readonly tenantId?: string;
  /** The head as the caller already read it (by name, or through a share); null: it read none. */
  readonly stored?: StoredResource<M> | null;
}

const label = (type: string) => type.replace(/_/g, ' ');

interface UpdateInput<M, S> {
  readonly name?: string;
  /** New public metadata (whole value). */
  readonly meta?: M;
  /** New secret part (whole value); undefined keeps the current one (resealed for the new version). */
  readonly secret?: S;
  readonly container_id?: string | null;
  readonly keep_versions?: number;
}

/**
 * Writes a new version of an existing resource. `ifMatch` is the client's If-Match header;
 * concurrent writers with the same version produce exactly one winner (409 for the rest).
 * `patch` may be a function of the current record and secret (read-modify-write).
 */
export async function updateResource<M, S>(
  ctx: CallContext,
  type: string,
  id: string,
  patch: UpdateInput<M, S> | ((current: ResourceRecord<M>, secret: S | undefined) => UpdateInput<M, S> | Promise<UpdateInput<M, S>>),
  change: (rec: ResourceRecord<M>, before: ResourceRecord<M>) => Change,
  opts: WriteOptions<M> = {},
): Promise<{ record: ResourceRecord<M>; secret: S | undefined }> {
  const tid = opts.tenantId ?? ctx.principal.tenantId;
  const stored = opts.stored === undefined ? await readResource<M>(tid, type, id) : (opts.stored ?? undefined);
  checkIfMatch(opts.ifMatch, stored?.record, label(type));
  const current = stored!.record;
  const currentSecret = await openSecret<S>(tid, current, stored!.sealed);
  const p = typeof patch === 'function' ? await patch(current, currentSecret) : patch;
  const rec: ResourceRecord<M> = {
    ...current,
    name: p.name ?? current.name,
    meta: p.meta ?? current.meta,
    container_id: p.container_id === undefined ? current.container_id : p.container_id,
    keep_versions: p.keep_versions ?? current.keep_versions,
    version: current.version + 1,
    updated_at: nowIso(),
    updated_by: actorName(ctx),
  };
  const secret = p.secret ?? currentSecret;
  const sealed = secret === undefined ? undefined : await sealJson(sealScope(tid, type, id, rec.version), secret);
  const items: TxItem[] = [
    headPut(tid, rec, sealed, {
      ConditionExpression: 'id = :id AND version = :v',
      ExpressionAttributeValues: { ':id': current.id, ':v': current.version },
    }),
    versionPut(tid, rec, sealed),
    ...pruneDeletes(tid, rec, current.keep_versions),
  ];
  const placed = pushMembership(tid, items, current, rec);
  const extraFrom = items.length;
  items.push(...(opts.extraItems ?? []));
  try {
    await commit(ctx, tid, items, change(rec, current));
  } catch (error) {
    membershipFailure(error, placed, rec);
    if (error instanceof TxConditionFailed) {
      if (error.index >= extraFrom) throw new TxConditionFailed(error.index - extraFrom, false);
      throw conflict(`the ${label(type)} was changed concurrently; read it again before retrying`, 'stale_etag');
    }
    throw error;
  }
  return { record: rec, secret };
}

/** Deletes a resource with all its versions, audited, in one transaction. */
export async function deleteResource<M>(
  ctx: CallContext,
  type: string,
  id: string,
  change: (rec: ResourceRecord<M>) => Change,
  opts: WriteOptions<M> = {},
): Promise<ResourceRecord<M>> {
  const tid = opts.tenantId ?? ctx.principal.tenantId;
  const stored = opts.stored === undefined ? await readResource<M>(tid, type, id) : (opts.stored ?? undefined);
  checkIfMatch(opts.ifMatch, stored?.record, label(type));
  const rec = stored!.record;
  const versions = await versionKeys(tid, type, id);
  const items: TxItem[] = [
    {
      Delete: {
        TableName: tableName(),
        Key: keys.head(tid, type, id, rec.name),
        ConditionExpression: 'id = :id AND version = :v',
        ExpressionAttributeValues: { ':id': rec.id, ':v': rec.version },
      },
    },
    ...versions.map((k): TxItem => ({ Delete: { TableName: tableName(), Key: k } })),
  ];
  pushMembership(tid, items, rec, null);
  const extraFrom = items.length;
  items.push(...(opts.extraItems ?? []));
  try {
    await commit(ctx, tid, items, change(rec));
  } catch (error) {
    if (error instanceof TxConditionFailed) {
      if (error.index >= extraFrom) throw new TxConditionFailed(error.index - extraFrom, false);
      throw conflict(`the ${label(type)} was changed concurrently; read it again before retrying`, 'stale_etag');
    }
    throw error;
  }
  return rec;
}

// --- the item plumbing of the small stores (lib/resources/items.ts: federation, S/KEY, time-locks)

export interface Key {
  readonly pk: string;
  readonly sk: string;
}

export async function readItem(key: Key): Promise<Item | undefined> {
  return (await db().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }))).Item;
}

export async function listItems(
  tenantId: string,
  prefix: string,
  page: { limit: number; offset: number; cursor?: string | undefined },
  projection: readonly string[],
): Promise<{ items: Item[]; nextCursor?: string }> {
  return queryPage<Item>({
    pk: keys.tenant(tenantId).pk,
    prefix,
    limit: page.limit,
    offset: page.cursor ? 0 : page.offset,
    ...(page.cursor ? { cursor: page.cursor } : {}),
    projection,
    newestFirst: true,
  });
}

/** A new item (refused when the key exists). */
export const putNew = (key: Key, fields: Record<string, unknown>): TxItem => ({
  Put: { TableName: tableName(), Item: { ...fields, ...key }, ConditionExpression: 'attribute_not_exists(pk)' },
});

/** A replacement of an item still at `version`. */
export const putAt = (key: Key, fields: Record<string, unknown>, version: number): TxItem => ({
  Put: {
    TableName: tableName(),
    Item: { ...fields, ...key },
    ConditionExpression: 'attribute_exists(pk) AND version = :v',
    ExpressionAttributeValues: { ':v': version },
  },
});

/** A delete of an item still at `version`. */
export const deleteAt = (key: Key, version: number): TxItem => ({
  Delete: {
    TableName: tableName(),
    Key: key,
    ConditionExpression: 'attribute_exists(pk) AND version = :v',
    ExpressionAttributeValues: { ':v': version },
  },
});

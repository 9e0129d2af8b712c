import type { CallContext } from '../auth/principal.js';
import type { Change } from '../audit/audit.js';
import { conflict, notFound } from '../core/errors.js';
import { newId, UUID_RE } from '../ids.js';
import { tableName } from '../store/client.js';
import { getMany, queryAll } from '../store/pagination.js';
import { keys } from '../store/keys.js';
import { memberCount } from '../store/membership.js';
import {
  checkIfMatch,
  createResource,
  deleteResource,
  etagOf,
  listResources,
  readResource,
  updateResource,
  type ResourceRecord,
} from '../resources/store.js';
import { TxConditionFailed, type TxItem } from '../store/tx.js';
import { containerIdByName } from './store.js';
import type { CreateContainerBody, ListContainersQuery, UpdateContainerBody } from './schemas.js';

/**
 * Containers: named groups of resources of any type, stored as the versioned resource
 * `R#container#<id>` (lib/resources/store.ts) with public metadata only. A container's name
 * is unique in its account (`CNAME#<name>`, written in the same transaction), so both its id
 * and its name address it in /api/v1/s/{container}/{key}. Membership (which resource sits in
 * which container under which key, and how many) is kept by every write that places a
 * resource (lib/store/membership.ts); a container that holds anything cannot be deleted (409).
 */
const TYPE = 'container';

interface ContainerMeta {
  readonly description: string;
  readonly tags: string[];
}

const containerView = (r: ResourceRecord<ContainerMeta>, memberCountValue: number) => ({
  id: r.id,
  name: r.name,
  description: r.meta.description ?? '',
  tags: r.meta.tags ?? [],
  version: r.version,
  member_count: memberCountValue,
  created_at: r.created_at,
  updated_at: r.updated_at,
  created_by: r.created_by,
  updated_by: r.updated_by,
});

export { etagOf };

const change = (
  action: string,
  event: 'container.created' | 'container.updated' | 'container.deleted',
  r: ResourceRecord<ContainerMeta>,
  detail?: Record<string, unknown>,
): Change => ({
  action,
  resource: { type: TYPE, id: r.id, name: r.name },
  ...(detail ? { detail } : {}),
  event: { type: event, data: { id: r.id, name: r.name, version: r.version } },
});

const namePut = (tid: string, name: string, id: string): TxItem => ({
  Put: { TableName: tableName(), Item: { ...keys.containerName(tid, name), id, name }, ConditionExpression: 'attribute_not_exists(pk)' },
});
const nameDelete = (tid: string, name: string, id: string): TxItem => ({
  Delete: {
    TableName: tableName(),
    Key: keys.containerName(tid, name),
    ConditionExpression: 'attribute_not_exists(pk) OR id = :id',
    ExpressionAttributeValues: { ':id': id },
  },
});

export async function createContainer(ctx: CallContext, body: CreateContainerBody) {
  const tid = ctx.principal.tenantId;
  const id = newId();
  try {
    const rec = await createResource<ContainerMeta, never>(
      ctx,
      { type: TYPE, id, name: body.name, meta: { description: body.description ?? '', tags: body.tags ?? [] } },
      (r) => change('container.create', 'container.created', r),
      [namePut(tid, body.name, id)],
    );
    return containerView(rec, 0);
  } catch (error) {
    if (error instanceof TxConditionFailed && error.index === 0) throw conflict(`a container named "${body.name}" already exists`, 'already_exists');
    throw error;
  }
}

/**
 * Renames or re-describes a container: a new version (updateResource); a new name moves the
 * name item in the same transaction. `If-Match` as for secrets (409 stale, 412 malformed).
 */
export async function updateContainer(ctx: CallContext, id: string, body: UpdateContainerBody, ifMatch?: string) {
  const tid = ctx.principal.tenantId;
  const stored = await readResource<ContainerMeta>(tid, TYPE, id);
  checkIfMatch(ifMatch, stored?.record, 'container');
  const current = stored!.record;
  const name = body.name ?? current.name;
  const extra: TxItem[] = name === current.name ? [] : [nameDelete(tid, current.name, id), namePut(tid, name, id)];
  try {
    const { record } = await updateResource<ContainerMeta, never>(
      ctx,
      TYPE,
      id,
      { name, meta: { description: body.description ?? current.meta.description ?? '', tags: body.tags ?? current.meta.tags ?? [] } },
      (r) => change('container.update', 'container.updated', r, { fields: Object.keys(body) }),
      // the name items were derived from this version: any other one is stale
      { ifMatch: etagOf(current), extraItems: extra },
    );
    return { record, container: containerView(record, await memberCount(tid, id)) };
  } catch (error) {
    if (error instanceof TxConditionFailed && error.index === 1) throw conflict(`a container named "${name}" already exists`, 'already_exists');
    if (error instanceof TxConditionFailed) throw conflict('the container was changed concurrently; read it again before retrying', 'stale_etag');
    throw error;
  }
}

/** Deletes an empty container (409 `container_not_empty` while it holds anything). */
export async function deleteContainer(ctx: CallContext, id: string, ifMatch?: string) {
  const tid = ctx.principal.tenantId;
  const stored = await readResource<ContainerMeta>(tid, TYPE, id);
  checkIfMatch(ifMatch, stored?.record, 'container');
  const current = stored!.record;
  const notEmpty = (n: number) => conflict(`the container holds ${n > 0 ? n : 'some'} resource(s): move or delete them first`, 'container_not_empty');
  const n = await memberCount(tid, id);
  if (n > 0) throw notEmpty(n);
  try {
    await deleteResource<ContainerMeta>(ctx, TYPE, id, (r) => change('container.delete', 'container.deleted', r), {
      ifMatch: etagOf(current),
      extraItems: [
        nameDelete(tid, current.name, id),
        // a resource placed concurrently makes this fail: never an orphaned member
        {
          Delete: {
            TableName: tableName(),
            Key: keys.containerCount(tid, id),
            ConditionExpression: 'attribute_not_exists(pk) OR n = :zero',
            ExpressionAttributeValues: { ':zero': 0 },
          },
        },
      ],
    });
  } catch (error) {
    if (error instanceof TxConditionFailed && error.index === 1) throw notEmpty(0);
    if (error instanceof TxConditionFailed) throw conflict('the container was changed concurrently; read it again before retrying', 'stale_etag');
    throw error;
  }
  return containerView(current, 0);
}

/** The container a path segment names: its id, else its name (unique in the account). */
export async function containerByRef(tenantId: string, ref: string): Promise<ResourceRecord<ContainerMeta> | undefined> {
  if (UUID_RE.test(ref)) {
    const byId = await readResource<ContainerMeta>(tenantId, TYPE, ref);
    if (byId) return byId.record;
  }
  const id = await containerIdByName(tenantId, ref);
  if (!id) return undefined;
  return (await readResource<ContainerMeta>(tenantId, TYPE, id))?.record;
}

async function counts(tenantId: string, ids: string[]): Promise<Map<string, number>> {
  const items = await getMany(ids.map((id) => keys.containerCount(tenantId, id)));
  return new Map(items.map((item) => [String(item.sk).slice('CCOUNT#'.length), Number(item.n ?? 0)]));
}

export async function listContainers(ctx: CallContext, query: ListContainersQuery) {
  const tid = ctx.principal.tenantId;
  const page = await listResources<ContainerMeta>(tid, TYPE, { limit: query.limit, offset: query.cursor ? 0 : query.offset, cursor: query.cursor });
  const n = await counts(
    tid,
    page.items.map((r) => r.id),
  );
  return { containers: page.items.map((r) => containerView(r, n.get(r.id) ?? 0)), nextCursor: page.nextCursor };
}

/** At most this many members are listed with a container. */
const MAX_LISTED_MEMBERS = 1000;

export async function getContainer(ctx: CallContext, id: string) {
  const tid = ctx.principal.tenantId;
  const stored = await readResource<ContainerMeta>(tid, TYPE, id);
  if (!stored) throw notFound('container');
  const items = await queryAll({ pk: keys.tenant(tid).pk, sk: { prefix: keys.containerMemberPrefix(id) } }, MAX_LISTED_MEMBERS);
  const members = items.map((m) => ({ key: m.name as string, type: m.type as string, id: m.id as string }));
  return { record: stored.record, container: { ...containerView(stored.record, await memberCount(tid, id)), members } };
}

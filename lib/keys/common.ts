import type { CallContext } from '../auth/principal.js';
import { requireScopes } from '../auth/scopes.js';
import { recordAudit, type Change } from '../audit/audit.js';
import { notFound } from '../core/errors.js';
import {
  createResource,
  deleteResource,
  etagOf,
  listResources,
  openSecret,
  readResource,
  updateResource,
  type ResourceRecord,
} from '../resources/store.js';
import type { TxItem } from '../store/tx.js';
import { CATALOG, type KeyMetaBase, type ResourceTypeName } from '../catalog.js';
import type { ListQuery, UpdateKeyBody } from './schemas.js';

/**
 * The storage conventions every key family shares, over the generic resource store:
 * public metadata in `meta` (shown by list and get), private material only in the sealed
 * secret part (opened by export alone), an audit entry and an event for every change and
 * for every export of private material.
 */
export type KeyView = Record<string, unknown> & { id: string; type: string; name: string; version: number };

/** The public view of a key: id, name, version, timestamps and its metadata, flattened. */
export function keyView<M extends object>(rec: ResourceRecord<M>): KeyView {
  return {
    id: rec.id,
    type: rec.type,
    name: rec.name,
    ...(rec.meta as Record<string, unknown>),
    version: rec.version,
    created_at: rec.created_at,
    updated_at: rec.updated_at,
    created_by: rec.created_by,
    updated_by: rec.updated_by,
  };
}

export { etagOf };

const label = (type: ResourceTypeName) => CATALOG[type].label;

const eventData = (rec: ResourceRecord<Partial<KeyMetaBase>>) => ({
  type: rec.type,
  id: rec.id,
  name: rec.name,
  algorithm: rec.meta.algorithm ?? null,
  fingerprint: rec.meta.fingerprint ?? null,
});

export async function createKey<M extends Partial<KeyMetaBase>, S>(
  ctx: CallContext,
  type: ResourceTypeName,
  input: { name: string; meta: M; secret?: S; id?: string },
  extraItems: TxItem[] = [],
  event?: (rec: ResourceRecord<M>) => NonNullable<Change['event']>,
): Promise<ResourceRecord<M>> {
  const verb = input.meta.source === 'imported' ? 'import' : 'create';
  return createResource<M, S>(
    ctx,
    { type, name: input.name, meta: input.meta, secret: input.secret, id: input.id },
    (rec): Change => ({
      action: `${type}.${verb}`,
      resource: { type, id: rec.id, name: rec.name },
      detail: { algorithm: rec.meta.algorithm ?? null, fingerprint: rec.meta.fingerprint ?? null, source: rec.meta.source ?? null },
      event: event ? event(rec) : { type: 'key.created', data: { ...eventData(rec), version: rec.version, source: rec.meta.source ?? null } },
    }),
    extraItems,
  );
}

/** The head of a key of the caller's account; another account's key is just as missing. */
export async function getKey<M>(
  ctx: CallContext,
  type: ResourceTypeName,
  id: string,
): Promise<{ record: ResourceRecord<M>; sealed: Uint8Array | undefined }> {
  const stored = await readResource<M>(ctx.principal.tenantId, type, id);
  if (!stored) throw notFound(label(type));
  return stored;
}

/** Opens the private part of a key for an export, auditing the export in the same call. */
export async function exportSecret<M, S>(
  ctx: CallContext,
  type: ResourceTypeName,
  stored: { record: ResourceRecord<M>; sealed: Uint8Array | undefined },
  what: string,
): Promise<S | undefined> {
  const secret = await openSecret<S>(ctx.principal.tenantId, stored.record, stored.sealed);
  if (secret === undefined) return undefined;
  await recordAudit(ctx, ctx.principal.tenantId, {
    action: `${type}.export`,
    resource: { type, id: stored.record.id, name: stored.record.name },
    detail: { part: 'private', what, version: stored.record.version },
  });
  return secret;
}

/** Throws 403 unless the caller may export private material of this type. */
export const requireExportScopes = (ctx: CallContext, type: ResourceTypeName) => requireScopes(ctx.principal, CATALOG[type].scopes.export);

export async function listKeys<M extends object>(ctx: CallContext, type: ResourceTypeName, query: ListQuery) {
  const page = await listResources<M>(ctx.principal.tenantId, type, {
    limit: query.limit,
    offset: query.cursor ? 0 : query.offset,
    cursor: query.cursor,
  });
  return { items: page.items.map((r) => keyView(r)), nextCursor: page.nextCursor ?? null };
}

export async function updateKeyMeta<M extends Partial<KeyMetaBase>>(
  ctx: CallContext,
  type: ResourceTypeName,
  id: string,
  body: UpdateKeyBody,
  ifMatch?: string,
): Promise<ResourceRecord<M>> {
  const { record } = await updateResource<M, unknown>(
    ctx,
    type,
    id,
    (current) => ({
      name: body.name,
      meta: {
        ...current.meta,
        ...(body.description !== undefined ? { description: body.description } : {}),
        ...(body.tags !== undefined ? { tags: body.tags } : {}),
      },
    }),
    (rec) => ({
      action: `${type}.update`,
      resource: { type, id: rec.id, name: rec.name },
      detail: { version: rec.version, fields: Object.keys(body) },
      event: { type: 'key.updated', data: { ...eventData(rec as ResourceRecord<Partial<KeyMetaBase>>), version: rec.version } },
    }),
    { ifMatch },
  );
  return record;
}

export async function deleteKey(ctx: CallContext, type: ResourceTypeName, id: string, ifMatch?: string) {
  return deleteResource<Partial<KeyMetaBase>>(
    ctx,
    type,
    id,
    (rec) => ({
      action: `${type}.delete`,
      resource: { type, id: rec.id, name: rec.name },
      event: { type: 'key.deleted', data: eventData(rec) },
    }),
    { ifMatch },
  );
}

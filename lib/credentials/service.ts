import type { CallContext } from '../auth/principal.js';
import type { Change } from '../audit/audit.js';
import { badRequest, notFound } from '../core/errors.js';
import { createResource, deleteResource, listResources, openSecret, readResource, updateResource, type ResourceRecord } from '../resources/store.js';
import type { TxItem } from '../store/tx.js';
import { COMMON_KEYS, fieldsOf, renderResource, split, type CredentialType, type Fields, type StoredMeta } from './model.js';

/**
 * The one domain module of every registry type: create, read, list, update and delete a
 * typed resource over lib/resources/store.ts, with the type's schema split into public
 * metadata and a sealed secret part, its prepare hook, and its PUT semantics.
 */
export type TypedRecord = ResourceRecord<StoredMeta>;

interface Opened {
  readonly record: TypedRecord;
  /** The type's fields, secret ones included. */
  readonly fields: Fields;
  readonly secret: Fields;
}

const what = (def: CredentialType) => def.type.replace(/_/g, ' ');

function change(def: CredentialType, verb: 'create' | 'update' | 'delete', rec: TypedRecord, detail?: Record<string, unknown>): Change {
  const past = verb === 'create' ? 'created' : verb === 'update' ? 'updated' : 'deleted';
  return {
    action: `${def.type}.${verb}`,
    resource: { type: def.type, id: rec.id, name: rec.name },
    event: {
      type: `credential.${past}`,
      data: { id: rec.id, type: def.type, name: rec.name, ...(verb === 'delete' ? {} : { version: rec.version }) },
    },
    ...(detail ? { detail } : {}),
  };
}

/** Renders a record with its visible secret part (GET) or without (lists, metadata). */
export const show = (def: CredentialType, rec: TypedRecord, secret?: Fields) => renderResource(def, rec, secret);

const commonOf = (body: Fields) => ({ description: body.description as string | undefined, tags: body.tags as string[] | undefined });
const ownFields = (body: Fields): Fields => Object.fromEntries(Object.entries(body).filter(([k]) => !COMMON_KEYS.includes(k)));

export async function createTyped(ctx: CallContext, def: CredentialType, body: Fields): Promise<{ record: TypedRecord; secret: Fields }> {
  const fields = def.prepare ? await def.prepare(ctx, ownFields(body), undefined) : ownFields(body);
  const { meta, secret } = split(def, fields, commonOf(body));
  const record = await createResource<StoredMeta, Fields>(
    ctx,
    { type: def.type, name: body.name as string, meta, secret, container_id: (body.container_id as string | null | undefined) ?? null },
    (rec) => change(def, 'create', rec),
  );
  return { record, secret };
}

/** A resource with its secret part opened; `authorize` runs on the record before decryption. */
export async function openTyped(
  tenantId: string,
  def: CredentialType,
  id: string,
  authorize?: (record: TypedRecord) => Promise<void>,
): Promise<Opened> {
  const stored = await readResource<StoredMeta>(tenantId, def.type, id);
  if (!stored) throw notFound(what(def));
  if (authorize) await authorize(stored.record);
  const secret = (await openSecret<Fields>(tenantId, stored.record, stored.sealed)) ?? {};
  return { record: stored.record, fields: fieldsOf(stored.record.meta, secret), secret };
}

/** Metadata only (no decryption). */
export async function readTyped(tenantId: string, def: CredentialType, id: string): Promise<TypedRecord> {
  const stored = await readResource<StoredMeta>(tenantId, def.type, id);
  if (!stored) throw notFound(what(def));
  return stored.record;
}

export async function listTyped(ctx: CallContext, def: CredentialType, page: { limit: number; offset: number; cursor?: string }) {
  return listResources<StoredMeta>(ctx.principal.tenantId, def.type, {
    limit: page.limit,
    offset: page.cursor ? 0 : page.offset,
    cursor: page.cursor,
  });
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Read-modify-write of a resource's fields as one new version: `next` gets the current
 * fields and returns the new ones; the prepare hook then runs on the result. `common`
 * carries name/description/tags/container_id changes. If-Match is honoured.
 */
export async function mutateTyped(
  ctx: CallContext,
  def: CredentialType,
  id: string,
  next: (current: Fields, record: TypedRecord) => Fields | Promise<Fields>,
  opts: { common?: Fields; ifMatch?: string; detail?: Record<string, unknown>; extraItems?: TxItem[] } = {},
): Promise<{ record: TypedRecord; secret: Fields }> {
  const common = opts.common ?? {};
  const out = await updateResource<StoredMeta, Fields>(
    ctx,
    def.type,
    id,
    async (current, currentSecret) => {
      const before = fieldsOf(current.meta, currentSecret);
      let fields = await next(before, current);
      if (def.prepare) fields = await def.prepare(ctx, fields, before);
      const { meta, secret } = split(def, fields, {
        description:
          (common.description as string | undefined) ?? (common.name !== undefined && def.update === 'replace' ? '' : current.meta.description),
        tags: (common.tags as string[] | undefined) ?? (common.name !== undefined && def.update === 'replace' ? [] : current.meta.tags),
      });
      return {
        name: common.name as string | undefined,
        meta,
        secret,
        ...(common.container_id !== undefined ? { container_id: common.container_id as string | null } : {}),
      };
    },
    (rec) => change(def, 'update', rec, opts.detail),
    { ifMatch: opts.ifMatch, extraItems: opts.extraItems },
  );
  return { record: out.record, secret: out.secret ?? {} };
}

/** PUT: the type's update semantics (model.ts TypeSpec.update) applied to the body. */
export function updateTyped(ctx: CallContext, def: CredentialType, id: string, body: Fields, ifMatch?: string) {
  const given = ownFields(body);
  return mutateTyped(
    ctx,
    def,
    id,
    (current) => {
      for (const f of def.immutable ?? []) {
        if (f in given && !same(given[f], current[f]))
          throw badRequest(`${f} cannot be changed`, [{ path: `body.${f}`, message: 'immutable: create a new resource instead' }], 'immutable_field');
      }
      if (def.update === 'merge' || def.updateFields) return { ...current, ...given };
      const kept = Object.fromEntries(def.secret.filter((k) => given[k] === undefined && current[k] !== undefined).map((k) => [k, current[k]]));
      const fixed = Object.fromEntries((def.immutable ?? []).map((k) => [k, current[k]]));
      const derived = Object.fromEntries((def.hidden ?? []).map((k) => [k, current[k]]));
      return { ...derived, ...given, ...kept, ...fixed };
    },
    { common: Object.fromEntries(COMMON_KEYS.filter((k) => k in body).map((k) => [k, body[k]])), ifMatch, detail: { fields: Object.keys(given) } },
  );
}

export function deleteTyped(ctx: CallContext, def: CredentialType, id: string, ifMatch?: string): Promise<TypedRecord> {
  return deleteResource<StoredMeta>(ctx, def.type, id, (rec) => change(def, 'delete', rec), {
    ifMatch,
    extraItems: def.extraDeletes?.(ctx.principal.tenantId, id),
  });
}

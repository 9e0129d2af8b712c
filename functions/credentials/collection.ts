import { z } from 'zod';
import { defineHandler, ok, created, validationFailed } from '../../lib/http/index.js';
import { ownOrShared } from '../../lib/sharing/access.js';
import { etagOf } from '../../lib/store/resources.js';
import { assertCanRead } from './access.js';
import type { Fields } from './model.js';
import { typeOfRoute } from './registry.js';
import { createTyped, deleteTyped, listTyped, openTyped, show, updateTyped, type TypedRecord } from './service.js';

/**
 * The one CRUD module of every registry collection (the 17 typed credential collections,
 * passwords, crypto wallets): a route's type comes from its path (registry.ts typeOfRoute),
 * its body schema from the type. Every route key of those collections maps to these five
 * exports in lib/routes.ts. Responses: `{ "<type>": {...} }` with an ETag for one resource,
 * `{ "<collection>": [...], total, next_cursor }` (metadata only) for a list.
 */
export const IdParams = z.strictObject({ id: z.uuid() });
export const ListQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
  cursor: z.string().min(1).max(2048).optional(),
});

/** Validates a body against the route type's schema (the JSON itself is parsed by defineHandler). */
export function parseBody<T>(schema: z.ZodType<T>, raw: unknown): T {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw validationFailed(parsed.error.issues.map((i) => ({ path: ['body', ...i.path.map(String)].join('.'), message: i.message })));
  return parsed.data;
}

const AnyBody = z.unknown();

export const list = defineHandler({
  query: ListQuery,
  async handler({ ctx, route, query }) {
    const def = typeOfRoute(route);
    const page = await listTyped(ctx, def, query);
    return ok({ [def.listKey]: page.items.map((r) => show(def, r)), total: page.items.length, limit: query.limit, offset: query.offset, next_cursor: page.nextCursor ?? null });
  },
});

export const create = defineHandler({
  body: AnyBody,
  async handler({ ctx, route, body }) {
    const def = typeOfRoute(route);
    const { record, secret } = await createTyped(ctx, def, parseBody<Fields>(def.createBody, body));
    return created({ [def.type]: show(def, record, secret) }, { ETag: etagOf(record) });
  },
});

export const get = defineHandler({
  params: IdParams,
  async handler({ ctx, route, params }) {
    const def = typeOfRoute(route);
    const authorize = route.handlerScopes ? (rec: TypedRecord) => assertCanRead(ctx, def, rec) : undefined;
    // a resource of another account shared with the caller's user is read from its owner's (lib/sharing)
    const { record, secret } = await ownOrShared(ctx, def.type, params.id, (tenantId) => openTyped(tenantId, def, params.id, authorize));
    return ok({ [def.type]: show(def, record, secret) }, { ETag: etagOf(record) });
  },
});

export const update = defineHandler({
  params: IdParams,
  body: AnyBody,
  async handler({ ctx, route, params, body, headers }) {
    const def = typeOfRoute(route);
    const { record, secret } = await updateTyped(ctx, def, params.id, parseBody<Fields>(def.updateBody, body), headers['if-match']);
    return ok({ [def.type]: show(def, record, secret) }, { ETag: etagOf(record) });
  },
});

export const remove = defineHandler({
  params: IdParams,
  async handler({ ctx, route, params, headers }) {
    const def = typeOfRoute(route);
    const record = await deleteTyped(ctx, def, params.id, headers['if-match']);
    return ok({ deleted: true, [def.type]: { id: record.id, name: record.name } });
  },
});

import type * as z from 'zod/v4';
import type { CallContext } from '../../lib/auth/principal.js';
import { created, defineHandler, ok } from '../../lib/http/index.js';
import { listPage } from '../../lib/schemas.js';
import type { ResourceRecord } from '../../lib/store/resources.js';
import { deleteKey, etagOf, keyView, listKeys, requireExportScopes, requireReadScopes, updateKeyMeta, type KeyView } from '../../lib/keys/common.js';
import type { ResourceTypeName } from '../../lib/catalog.js';
import { ExportQuery, IdParams, ListQuery, UpdateKeyBody } from '../../lib/keys/schemas.js';

/**
 * The seven handlers of a key family (/api/v1/ssh-keys, /api/v1/gpg-keys): list, generate,
 * import, get, export, update, delete, over the family's own service. Scopes checked here:
 * GET /{id} needs the family's read scope; GET /{id}/export needs it for the public key and
 * export:read as well for `?private=true`.
 */
export function keyFamilyHandlers<G, I>(family: {
  readonly type: ResourceTypeName;
  /** The response field of one key, e.g. `ssh_key` (lists use its plural). */
  readonly field: string;
  readonly generateBody: z.ZodType<G>;
  readonly importBody: z.ZodType<I>;
  generate(ctx: CallContext, body: G): Promise<KeyView>;
  importKey(ctx: CallContext, body: I): Promise<KeyView>;
  get(ctx: CallContext, id: string): Promise<{ record: ResourceRecord<object> }>;
  exportKey(ctx: CallContext, id: string, includePrivate: boolean): Promise<unknown>;
}) {
  const { type, field } = family;
  return {
    list: defineHandler({
      query: ListQuery,
      async handler({ ctx, query }) {
        const page = await listKeys(ctx, type, query);
        return ok(listPage(`${field}s`, page.items, page.nextCursor, query));
      },
    }),
    generate: defineHandler({
      body: family.generateBody,
      async handler({ ctx, body }) {
        const key = await family.generate(ctx, body);
        return created({ [field]: key }, { ETag: etagOf(key) });
      },
    }),
    importKey: defineHandler({
      body: family.importBody,
      async handler({ ctx, body }) {
        const key = await family.importKey(ctx, body);
        return created({ [field]: key }, { ETag: etagOf(key) });
      },
    }),
    get: defineHandler({
      params: IdParams,
      async handler({ ctx, params }) {
        requireReadScopes(ctx, type);
        const { record } = await family.get(ctx, params.id);
        return ok({ [field]: keyView(record) }, { ETag: etagOf(record) });
      },
    }),
    exportKey: defineHandler({
      params: IdParams,
      query: ExportQuery,
      async handler({ ctx, params, query }) {
        requireReadScopes(ctx, type);
        if (query.private) requireExportScopes(ctx, type);
        return ok({ export: await family.exportKey(ctx, params.id, query.private) });
      },
    }),
    update: defineHandler({
      params: IdParams,
      body: UpdateKeyBody,
      async handler({ ctx, params, body, headers }) {
        const rec = await updateKeyMeta(ctx, type, params.id, body, headers['if-match']);
        return ok({ [field]: keyView(rec) }, { ETag: etagOf(rec) });
      },
    }),
    remove: defineHandler({
      params: IdParams,
      async handler({ ctx, params, headers }) {
        const rec = await deleteKey(ctx, type, params.id, headers['if-match']);
        return ok({ deleted: true, [field]: { id: rec.id, name: rec.name } });
      },
    }),
  };
}

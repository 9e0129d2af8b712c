import type * as z from 'zod/v4';
import type { CallContext } from '../auth/principal.js';
import { created, defineHandler, ok } from '../http/index.js';
import { listPage } from '../schemas.js';
import type { ResourceRecord } from '../resources/store.js';
import { deleteKey, etagOf, keyView, listKeys, requireExportScopes, updateKeyMeta, type KeyView } from './common.js';
import { CATALOG, type ResourceTypeName } from '../catalog.js';
import { ExportQuery, IdParams, keyFamilyResponses, ListQuery, UpdateKeyBody } from './schemas.js';

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
  /** The family's name in the documentation, e.g. `SSH`. */
  readonly label: string;
  /** One key as the API shows it (lib/keys/schemas.ts). */
  readonly schema: z.ZodType;
  /** The answer of GET /{id}/export. */
  readonly exportSchema: z.ZodType;
  readonly generateBody: z.ZodType<G>;
  readonly importBody: z.ZodType<I>;
  generate(ctx: CallContext, body: G): Promise<KeyView>;
  importKey(ctx: CallContext, body: I): Promise<KeyView>;
  get(ctx: CallContext, id: string): Promise<{ record: ResourceRecord<object> }>;
  exportKey(ctx: CallContext, id: string, includePrivate: boolean): Promise<unknown>;
}) {
  const { type, field, label } = family;
  /** The article before the label: an SSH key, an OpenPGP key. */
  const an = /^(SSH|[AEIOU])/.test(label) ? 'an' : 'a';
  const responses = keyFamilyResponses(field, family.schema, label);
  return {
    list: defineHandler({
      summary: `List ${label} keys`,
      description: 'The account’s keys, public parts only, oldest first; page with `limit` and `offset` or `cursor`.',
      responses: { 200: responses.list },
      errors: ['bad_request'],
      query: ListQuery,
      async handler({ ctx, query }) {
        const page = await listKeys(ctx, type, query);
        return ok(listPage(`${field}s`, page.items, page.nextCursor, query));
      },
    }),
    generate: defineHandler({
      summary: `Generate ${an} ${label} key`,
      description: 'Generates a key pair and keeps the private part sealed; the answer shows the public parts and the ETag.',
      responses: { 201: responses.one },
      errors: ['bad_request', 'already_exists'],
      body: family.generateBody,
      async handler({ ctx, body }) {
        const key = await family.generate(ctx, body);
        return created({ [field]: key }, { ETag: etagOf(key) });
      },
    }),
    importKey: defineHandler({
      summary: `Import ${an} ${label} key`,
      description: 'Stores an existing key (the private key, or the public key alone); a protected private key needs its `passphrase`.',
      responses: { 201: responses.one },
      errors: ['bad_request', 'invalid_key', 'passphrase_required', 'wrong_passphrase', 'already_exists'],
      body: family.importBody,
      async handler({ ctx, body }) {
        const key = await family.importKey(ctx, body);
        return created({ [field]: key }, { ETag: etagOf(key) });
      },
    }),
    get: defineHandler({
      summary: `Read ${an} ${label} key`,
      description: 'The key’s public parts and metadata; the ETag names its version.',
      responses: { 200: responses.one },
      errors: ['not_found', 'insufficient_scope'],
      scopes: CATALOG[type].scopes.read,
      params: IdParams,
      async handler({ ctx, params }) {
        const { record } = await family.get(ctx, params.id);
        return ok({ [field]: keyView(record) }, { ETag: etagOf(record) });
      },
    }),
    exportKey: defineHandler({
      summary: `Export ${an} ${label} key`,
      description: 'The public key; with `?private=true` (needs export:read as well, audited) the private key too.',
      responses: { 200: family.exportSchema },
      errors: ['not_found', 'insufficient_scope', 'no_private_key'],
      // the read scope before the query is validated; `?private=true` needs the export scopes too
      scopes: CATALOG[type].scopes.read,
      params: IdParams,
      query: ExportQuery,
      async handler({ ctx, params, query }) {
        if (query.private) requireExportScopes(ctx, type);
        return ok({ export: await family.exportKey(ctx, params.id, query.private) });
      },
    }),
    update: defineHandler({
      summary: `Update ${an} ${label} key’s metadata`,
      description:
        'Changes the name, description or tags (the key material never changes). `If-Match` is required: the ETag of a GET (a newer version: 409 `stale_etag`), or `*`; without it 428 `precondition_required`.',
      responses: { 200: responses.one },
      errors: ['not_found', 'already_exists', 'stale_etag', 'precondition_failed', 'precondition_required'],
      ifMatch: 'required',
      params: IdParams,
      body: UpdateKeyBody,
      async handler({ ctx, params, body, headers }) {
        const rec = await updateKeyMeta(ctx, type, params.id, body, headers['if-match']);
        return ok({ [field]: keyView(rec) }, { ETag: etagOf(rec) });
      },
    }),
    remove: defineHandler({
      summary: `Delete ${an} ${label} key`,
      description: 'Deletes the key and its private part. `If-Match` makes the delete conditional on the version read.',
      responses: { 200: responses.deleted },
      errors: ['not_found', 'stale_etag', 'precondition_failed'],
      params: IdParams,
      async handler({ ctx, params, headers }) {
        const rec = await deleteKey(ctx, type, params.id, headers['if-match']);
        return ok({ deleted: true, [field]: { id: rec.id, name: rec.name } });
      },
    }),
  };
}

import type * as z from 'zod/v4';
import { created, defineHandler, ok } from '../http/index.js';
import { IdParams, listPage, PageQuery } from '../schemas.js';
import { ownOrShared } from '../sharing/access.js';
import { etagOf } from '../resources/store.js';
import { assertCanRead } from './access.js';
import { describeType, type CredentialType, type Fields, type TypeSpec } from './model.js';
import { collectionResponses } from './schemas.js';
import { createTyped, deleteTyped, listTyped, openTyped, show, updateTyped, type TypedRecord } from './service.js';

/**
 * The five CRUD handlers of one typed collection (the 17 credential collections, passwords,
 * crypto wallets), made from its type spec: each route's handler module calls this with its
 * own type (`export const { list, create, get, update, remove } = collectionHandlers(wifiCredential)`
 * in functions/credentials/wifi-credentials.ts), so the module's bundle holds only that type's
 * code and its body schemas are the type's real create/PUT schemas (published by the OpenAPI
 * document). Responses: `{ "<type>": {...} }` with an ETag for one resource,
 * `{ "<collection>": [...], total, next_cursor }` (metadata only) for a list.
 */
export function collectionHandlers(spec: TypeSpec) {
  const def: CredentialType = describeType(spec);
  const responses = collectionResponses(def);
  const a = `${/^([aeiou]|LDAP|NTLM|SSH)/i.test(def.label) ? 'an' : 'a'} ${def.label}`;
  return {
    /** The type joined with its catalogue entry, for the module's own extra routes. */
    def,
    /** The collection's response schemas (lib/credentials/schemas.ts), for the module's own extra routes. */
    responses,
    list: defineHandler({
      summary: `List ${def.label}s`,
      description: `${def.summary} The list shows metadata only: \`secret_fields\` names the secret fields that are set.`,
      responses: { 200: responses.list },
      errors: ['bad_request'],
      query: PageQuery,
      async handler({ ctx, query }) {
        const page = await listTyped(ctx, def, query);
        return ok(
          listPage(
            def.listKey,
            page.items.map((r) => show(def, r)),
            page.nextCursor,
            query,
          ),
        );
      },
    }),
    create: defineHandler({
      summary: `Create ${a}`,
      description: `${def.summary} The answer carries the resource with its secret fields and its ETag.`,
      responses: { 201: responses.one },
      errors: ['already_exists', 'quota_exceeded', 'not_found', ...(def.createErrors ?? [])],
      body: def.createBody as z.ZodType<Fields>,
      async handler({ ctx, body }) {
        const { record, secret } = await createTyped(ctx, def, body);
        return created({ [def.type]: show(def, record, secret) }, { ETag: etagOf(record) });
      },
    }),
    get: defineHandler({
      summary: `Read ${a}`,
      description: 'The resource with its secret fields (a withheld key part only through its export route) and its ETag.',
      responses: { 200: responses.one },
      errors: ['not_found'],
      params: IdParams,
      async handler({ ctx, route, params }) {
        const authorize = route.handlerScopes ? (rec: TypedRecord) => assertCanRead(ctx, def, rec) : undefined;
        // a resource of another account shared with the caller's user is read from its owner's (lib/sharing)
        const { record, secret } = await ownOrShared(ctx, def.type, params.id, (tenantId) => openTyped(tenantId, def, params.id, authorize));
        return ok({ [def.type]: show(def, record, secret) }, { ETag: etagOf(record) });
      },
    }),
    update: defineHandler({
      summary: `Update ${a}`,
      description: `${def.updateSemantics} \`If-Match\` is required: the ETag of a GET (a newer version: 409 \`stale_etag\`), or \`*\` to overwrite any version; without it 428 \`precondition_required\`.`,
      responses: { 200: responses.one },
      errors: ['not_found', 'stale_etag', 'precondition_failed', 'precondition_required', 'immutable_field', 'already_exists'],
      ifMatch: 'required',
      params: IdParams,
      body: def.updateBody as z.ZodType<Fields>,
      async handler({ ctx, params, body, headers }) {
        const { record, secret } = await updateTyped(ctx, def, params.id, body, headers['if-match']);
        return ok({ [def.type]: show(def, record, secret) }, { ETag: etagOf(record) });
      },
    }),
    remove: defineHandler({
      summary: `Delete ${a}`,
      description: 'Deletes the resource and its versions; `If-Match` makes the delete conditional on the version read.',
      responses: { 200: responses.deleted },
      errors: ['not_found', 'stale_etag', 'precondition_failed'],
      params: IdParams,
      async handler({ ctx, params, headers }) {
        const record = await deleteTyped(ctx, def, params.id, headers['if-match']);
        return ok({ deleted: true, [def.type]: { id: record.id, name: record.name } });
      },
    }),
  };
}

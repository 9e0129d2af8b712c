import { CreateJwksBody, JwkSetAnswer, JwkSetDeleted, JwkSetDocument, JwkSetPage, UpdateJwksBody } from '../../lib/federation/schemas.js';
import { createJwks, deleteJwks, getJwks, listJwks, publishedJwks, updateJwks } from '../../lib/federation/jwks.js';
import { created, defineHandler, download, ok } from '../../lib/http/index.js';
import { IdParams, listPage, PageQuery } from '../../lib/schemas.js';

/** Trusted JWK sets (lib/federation/jwks.ts); lists show key ids, not keys. */
export const list = defineHandler({
  summary: 'List trusted JWK sets',
  description: 'Key ids only, not the keys.',
  responses: { 200: JwkSetPage },
  errors: ['bad_request'],
  query: PageQuery,
  async handler({ ctx, query }) {
    const page = await listJwks(ctx, query);
    return ok(listPage('jwks', page.sets, page.nextCursor, query));
  },
});

export const create = defineHandler({
  summary: 'Add a trusted JWK set',
  description:
    'Public keys given inline or fetched from `jwks_uri` (through the outbound guard), validated key by key. One set per issuer in an account.',
  responses: { 201: JwkSetAnswer },
  errors: ['bad_request', 'jwks_fetch_failed', 'already_exists'],
  body: CreateJwksBody,
  async handler({ ctx, body }) {
    return created({ jwks: await createJwks(ctx, body) });
  },
});

export const get = defineHandler({
  summary: 'Get a trusted JWK set',
  responses: { 200: JwkSetAnswer },
  errors: ['not_found'],
  params: IdParams,
  async handler({ ctx, params }) {
    return ok({ jwks: await getJwks(ctx, params.id) });
  },
});

export const update = defineHandler({
  summary: 'Update a trusted JWK set',
  description: '`refresh` refetches a URL set now.',
  responses: { 200: JwkSetAnswer },
  errors: ['not_found', 'bad_request', 'jwks_fetch_failed', 'already_exists'],
  params: IdParams,
  body: UpdateJwksBody,
  async handler({ ctx, params, body }) {
    return ok({ jwks: await updateJwks(ctx, params.id, body) });
  },
});

export const remove = defineHandler({
  summary: 'Delete a trusted JWK set',
  responses: { 200: JwkSetDeleted },
  errors: ['not_found'],
  params: IdParams,
  async handler({ ctx, params }) {
    const s = await deleteJwks(ctx, params.id);
    return ok({ deleted: true, jwks: { id: s.id, name: s.name } });
  },
});

/** The account's published keys as a plain RFC 7517 document (no envelope). */
export const wellKnown = defineHandler({
  summary: 'Get the account’s published JWK set',
  description: 'The keys of the sets marked `publish`, as a plain RFC 7517 JWK set document (application/jwk-set+json, no envelope).',
  responses: { 200: JwkSetDocument },
  media: { 200: ['application/jwk-set+json'] },
  async handler({ ctx }) {
    return download(JSON.stringify(await publishedJwks(ctx)), 'application/jwk-set+json');
  },
});

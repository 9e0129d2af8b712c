import { CreateJwksBody, UpdateJwksBody } from '../../lib/federation/schemas.js';
import { createJwks, deleteJwks, getJwks, listJwks, publishedJwks, updateJwks } from '../../lib/federation/jwks.js';
import { created, defineHandler, download, ok } from '../../lib/http/index.js';
import { IdParams, listPage, PageQuery } from '../../lib/schemas.js';

/** Trusted JWK sets (lib/federation/jwks.ts); lists show key ids, not keys. */
export const list = defineHandler({
  query: PageQuery,
  async handler({ ctx, query }) {
    const page = await listJwks(ctx, query);
    return ok(listPage('jwks', page.sets, page.nextCursor, query));
  },
});

export const create = defineHandler({
  body: CreateJwksBody,
  async handler({ ctx, body }) {
    return created({ jwks: await createJwks(ctx, body) });
  },
});

export const get = defineHandler({
  params: IdParams,
  async handler({ ctx, params }) {
    return ok({ jwks: await getJwks(ctx, params.id) });
  },
});

export const update = defineHandler({
  params: IdParams,
  body: UpdateJwksBody,
  async handler({ ctx, params, body }) {
    return ok({ jwks: await updateJwks(ctx, params.id, body) });
  },
});

export const remove = defineHandler({
  params: IdParams,
  async handler({ ctx, params }) {
    const s = await deleteJwks(ctx, params.id);
    return ok({ deleted: true, jwks: { id: s.id, name: s.name } });
  },
});

/** The account's published keys as a plain RFC 7517 document (no envelope). */
export const wellKnown = defineHandler({
  async handler({ ctx }) {
    return download(JSON.stringify(await publishedJwks(ctx)), 'application/jwk-set+json');
  },
});

import { RevokeTokenBody, StoreTokenBody } from '../../lib/federation/schemas.js';
import { deleteToken, getToken, listTokens, revokeToken, storeToken } from '../../lib/federation/tokens.js';
import { created, defineHandler, ok } from '../../lib/http/index.js';
import { IdParams, listPage, PageQuery } from '../../lib/schemas.js';

/** Stored OIDC tokens (lib/federation/tokens.ts): metadata in lists, the raw token only in GET of one active token. */
export const list = defineHandler({
  query: PageQuery,
  async handler({ ctx, query }) {
    const page = await listTokens(ctx, query);
    return ok(listPage('tokens', page.tokens, page.nextCursor, query));
  },
});

export const store = defineHandler({
  body: StoreTokenBody,
  async handler({ ctx, body }) {
    return created({ token: await storeToken(ctx, body) });
  },
});

export const get = defineHandler({
  params: IdParams,
  async handler({ ctx, params }) {
    const { token, ...meta } = await getToken(ctx, params.id);
    return ok({ token: meta, raw_token: token });
  },
});

export const revoke = defineHandler({
  params: IdParams,
  body: RevokeTokenBody,
  async handler({ ctx, params, body }) {
    return ok({ token: await revokeToken(ctx, params.id, body) });
  },
});

export const remove = defineHandler({
  params: IdParams,
  async handler({ ctx, params }) {
    const t = await deleteToken(ctx, params.id);
    return ok({ deleted: true, token: { id: t.id } });
  },
});

import { defineHandler, ok, created } from '../../lib/http/index.js';
import { IdParams, PageQuery, listPage } from '../../lib/schemas.js';
import { CreateTokenBody, RotateTokenBody } from '../../lib/credentials/types/api-token.js';
import { createToken, deleteToken, getToken, listTokens, rotateToken } from './service.js';

/** /api/v1/api-tokens: personal tokens; the token value is in the create and rotate answers only. */
export const list = defineHandler({
  query: PageQuery,
  async handler({ ctx, query }) {
    const page = await listTokens(ctx, query);
    return ok(listPage('api_tokens', page.tokens, page.nextCursor));
  },
});

export const get = defineHandler({
  params: IdParams,
  async handler({ ctx, params }) {
    return ok({ api_token: await getToken(ctx, params.id) });
  },
});

export const create = defineHandler({
  body: CreateTokenBody,
  async handler({ ctx, body }) {
    return created({ api_token: await createToken(ctx, body) });
  },
});

export const rotate = defineHandler({
  params: IdParams,
  body: RotateTokenBody,
  async handler({ ctx, params, body }) {
    return ok({ api_token: await rotateToken(ctx, params.id, body.grace_seconds) });
  },
});

export const remove = defineHandler({
  params: IdParams,
  async handler({ ctx, params }) {
    return ok({ deleted: true, api_token: await deleteToken(ctx, params.id) });
  },
});

import { defineHandler, ok, created } from '../../lib/http/index.js';
import { IdParams, PageQuery, listPage } from '../../lib/schemas.js';
import {
  ApiTokenAnswer,
  ApiTokenDeleted,
  ApiTokenIssued,
  ApiTokenList,
  CreateTokenBody,
  RotateTokenBody,
} from '../../lib/credentials/types/api-token.js';
import { createToken, deleteToken, getToken, listTokens, rotateToken } from '../../lib/tokens/service.js';

/** /api/v1/api-tokens: personal tokens; the token value is in the create and rotate answers only. */
export const list = defineHandler({
  summary: 'List API tokens',
  description: 'The account’s personal API tokens: prefix, scopes and expiry, never the token.',
  responses: { 200: ApiTokenList },
  errors: ['bad_request'],
  query: PageQuery,
  async handler({ ctx, query }) {
    const page = await listTokens(ctx, query);
    return ok(listPage('api_tokens', page.tokens, page.nextCursor));
  },
});

export const get = defineHandler({
  summary: 'Read an API token',
  description: 'The token’s prefix, scopes, expiry and rotation state, never the token.',
  responses: { 200: ApiTokenAnswer },
  params: IdParams,
  async handler({ ctx, params }) {
    return ok({ api_token: await getToken(ctx, params.id) });
  },
});

export const create = defineHandler({
  summary: 'Create an API token',
  description:
    'A personal token with scopes (at most the creator’s own) and an expiry (default 90 days, at most 366). The token is in this answer only; only its hash is stored.',
  responses: { 201: ApiTokenIssued },
  errors: ['scope_escalation', 'already_exists', 'quota_exceeded'],
  body: CreateTokenBody,
  async handler({ ctx, body }) {
    return created({ api_token: await createToken(ctx, body) });
  },
});

export const rotate = defineHandler({
  summary: 'Rotate an API token',
  description:
    'Issues a new token value; the old one stops working at once, or after `grace_seconds` (at most a day). The new token is in this answer only.',
  responses: { 200: ApiTokenIssued },
  errors: ['credentials_expired', 'stale_etag'],
  params: IdParams,
  body: RotateTokenBody,
  async handler({ ctx, params, body }) {
    return ok({ api_token: await rotateToken(ctx, params.id, body.grace_seconds) });
  },
});

export const remove = defineHandler({
  summary: 'Delete an API token',
  description: 'Revokes the token (and a rotated one still in its grace period) at once.',
  responses: { 200: ApiTokenDeleted },
  errors: ['stale_etag'],
  params: IdParams,
  async handler({ ctx, params }) {
    return ok({ deleted: true, api_token: await deleteToken(ctx, params.id) });
  },
});

import { OidcTokenAnswer, OidcTokenDeleted, OidcTokenPage, OidcTokenRead, RevokeTokenBody, StoreTokenBody } from '../../lib/federation/schemas.js';
import { deleteToken, getToken, listTokens, revokeToken, storeToken } from '../../lib/federation/tokens.js';
import { created, defineHandler, ok } from '../../lib/http/index.js';
import { IdParams, listPage, PageQuery } from '../../lib/schemas.js';

/** Stored OIDC tokens (lib/federation/tokens.ts): metadata in lists, the raw token only in GET of one active token. */
export const list = defineHandler({
  summary: 'List stored OIDC tokens',
  description: 'Metadata only, never the tokens.',
  responses: { 200: OidcTokenPage },
  errors: ['bad_request'],
  query: PageQuery,
  async handler({ ctx, query }) {
    const page = await listTokens(ctx, query);
    return ok(listPage('tokens', page.tokens, page.nextCursor, query));
  },
});

export const store = defineHandler({
  summary: 'Store an OIDC token',
  description: 'The JWT is sealed; its claims are recorded and its signature checked against the account’s JWK set for its issuer (`verification`).',
  responses: { 201: OidcTokenAnswer },
  errors: ['bad_request'],
  body: StoreTokenBody,
  async handler({ ctx, body }) {
    return created({ token: await storeToken(ctx, body) });
  },
});

export const get = defineHandler({
  summary: 'Get a stored OIDC token',
  description: 'The raw token only while it is active.',
  responses: { 200: OidcTokenRead },
  errors: ['not_found'],
  params: IdParams,
  async handler({ ctx, params }) {
    const { token, ...meta } = await getToken(ctx, params.id);
    return ok({ token: meta, raw_token: token });
  },
});

export const revoke = defineHandler({
  summary: 'Revoke a stored OIDC token',
  responses: { 200: OidcTokenAnswer },
  errors: ['not_found', 'already_revoked'],
  params: IdParams,
  body: RevokeTokenBody,
  async handler({ ctx, params, body }) {
    return ok({ token: await revokeToken(ctx, params.id, body) });
  },
});

export const remove = defineHandler({
  summary: 'Delete a stored OIDC token',
  responses: { 200: OidcTokenDeleted },
  errors: ['not_found'],
  params: IdParams,
  async handler({ ctx, params }) {
    const t = await deleteToken(ctx, params.id);
    return ok({ deleted: true, token: { id: t.id } });
  },
});

import { CheckReplayBody, StoreAssertionBody } from '../../lib/federation/saml-schemas.js';
import { checkReplay, deleteAssertion, getAssertion, listAssertions, storeAssertion } from '../../lib/federation/saml.js';
import { created, defineHandler, ok } from '../../lib/http/index.js';
import { IdParams, listPage, PageQuery } from '../../lib/schemas.js';

/** Verified SAML assertions and the replay check (lib/federation/saml.ts). */
export const list = defineHandler({
  query: PageQuery,
  async handler({ ctx, query }) {
    const page = await listAssertions(ctx, query);
    return ok(listPage('assertions', page.assertions, page.nextCursor, query));
  },
});

export const store = defineHandler({
  body: StoreAssertionBody,
  async handler({ ctx, body }) {
    return created({ assertion: await storeAssertion(ctx, body) });
  },
});

export const get = defineHandler({
  params: IdParams,
  async handler({ ctx, params }) {
    return ok({ assertion: await getAssertion(ctx, params.id) });
  },
});

export const remove = defineHandler({
  params: IdParams,
  async handler({ ctx, params }) {
    const a = await deleteAssertion(ctx, params.id);
    return ok({ deleted: true, assertion: { id: a.id, assertion_id: a.assertion_id } });
  },
});

/** 200 `{fresh: true}` the first time an (issuer, assertion id) is seen; 409 assertion_replayed after. */
export const replay = defineHandler({
  body: CheckReplayBody,
  async handler({ ctx, body }) {
    return ok(await checkReplay(ctx, body));
  },
});

import {
  AssertionAnswer,
  AssertionDeleted,
  AssertionPage,
  CheckReplayBody,
  ReplayFresh,
  StoreAssertionBody,
} from '../../lib/federation/saml-schemas.js';
import { checkReplay, deleteAssertion, getAssertion, listAssertions, storeAssertion } from '../../lib/federation/saml.js';
import { created, defineHandler, ok } from '../../lib/http/index.js';
import { IdParams, listPage, PageQuery } from '../../lib/schemas.js';

/** Verified SAML assertions and the replay check (lib/federation/saml.ts). */
export const list = defineHandler({
  summary: 'List verified SAML assertions',
  responses: { 200: AssertionPage },
  errors: ['bad_request'],
  query: PageQuery,
  async handler({ ctx, query }) {
    const page = await listAssertions(ctx, query);
    return ok(listPage('assertions', page.assertions, page.nextCursor, query));
  },
});

export const store = defineHandler({
  summary: 'Verify and record a SAML assertion',
  description:
    'Verified against the signing certificates of the stored metadata whose entityID is the assertion’s issuer (wrapping attacks refused), refused when expired or not yet valid (60 s skew). Only the assertion’s SHA-256 is kept.',
  responses: { 201: AssertionAnswer },
  errors: ['invalid_xml', 'unknown_issuer', 'saml_signature_invalid', 'assertion_expired', 'bad_request'],
  body: StoreAssertionBody,
  async handler({ ctx, body }) {
    return created({ assertion: await storeAssertion(ctx, body) });
  },
});

export const get = defineHandler({
  summary: 'Get a recorded SAML assertion',
  responses: { 200: AssertionAnswer },
  errors: ['not_found'],
  params: IdParams,
  async handler({ ctx, params }) {
    return ok({ assertion: await getAssertion(ctx, params.id) });
  },
});

export const remove = defineHandler({
  summary: 'Delete a recorded SAML assertion',
  responses: { 200: AssertionDeleted },
  errors: ['not_found'],
  params: IdParams,
  async handler({ ctx, params }) {
    const a = await deleteAssertion(ctx, params.id);
    return ok({ deleted: true, assertion: { id: a.id, assertion_id: a.assertion_id } });
  },
});

/** 200 `{fresh: true}` the first time an (issuer, assertion id) is seen; 409 assertion_replayed after. */
export const replay = defineHandler({
  summary: 'Check a SAML assertion for replay',
  description:
    'The first check of an (issuer, assertion id) is fresh; every later one, concurrent ones included, is 409 `assertion_replayed` until the assertion expires.',
  responses: { 200: ReplayFresh },
  errors: ['assertion_replayed', 'assertion_expired'],
  body: CheckReplayBody,
  async handler({ ctx, body }) {
    return ok(await checkReplay(ctx, body));
  },
});

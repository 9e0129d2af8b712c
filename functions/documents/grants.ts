import { WRITE_SCOPE } from '../../lib/documents/access.js';
import { createGrant, listGrants, revokeGrant } from '../../lib/documents/grants.js';
import { DocumentGrantAnswer, DocumentGrantList, DocumentGrantRevoked, GrantBody, GrantParams } from '../../lib/documents/schemas.js';
import { created, defineHandler, ok } from '../../lib/http/index.js';
import { IdParams } from '../../lib/schemas.js';

/** Expiring grants of a document to users of any account (lib/documents/grants.ts). */
export const list = defineHandler({
  summary: 'List a document’s grants',
  responses: { 200: DocumentGrantList },
  errors: ['not_found', 'insufficient_scope'],
  params: IdParams,
  async handler({ ctx, params }) {
    return ok(await listGrants(ctx, params.id));
  },
});

export const create = defineHandler({
  summary: 'Grant a document to a user',
  description: 'An expiring grant to a user of any account, by e-mail, with its own download and render permissions (within the document’s).',
  responses: { 201: DocumentGrantAnswer },
  errors: ['not_found', 'bad_request', 'already_exists', 'conflict', 'insufficient_scope'],
  // grants are the owner account's to give: documents:write before the body is validated (then the document's lookup)
  scopes: [WRITE_SCOPE],
  params: IdParams,
  body: GrantBody,
  async handler({ ctx, params, body }) {
    return created({ grant: await createGrant(ctx, params.id, body) });
  },
});

export const remove = defineHandler({
  summary: 'Revoke a document grant',
  responses: { 200: DocumentGrantRevoked },
  errors: ['not_found', 'conflict', 'insufficient_scope'],
  params: GrantParams,
  async handler({ ctx, params }) {
    return ok({ revoked: true, grant: await revokeGrant(ctx, params.id, params.grant) });
  },
});

import { createGrant, listGrants, revokeGrant } from '../../lib/documents/grants.js';
import { GrantBody, GrantParams } from '../../lib/documents/schemas.js';
import { created, defineHandler, ok } from '../../lib/http/index.js';
import { IdParams } from '../../lib/schemas.js';

/** Expiring grants of a document to users of any account (lib/documents/grants.ts). */
export const list = defineHandler({
  params: IdParams,
  async handler({ ctx, params }) {
    return ok(await listGrants(ctx, params.id));
  },
});

export const create = defineHandler({
  params: IdParams,
  body: GrantBody,
  async handler({ ctx, params, body }) {
    return created({ grant: await createGrant(ctx, params.id, body) });
  },
});

export const remove = defineHandler({
  params: GrantParams,
  async handler({ ctx, params }) {
    return ok({ revoked: true, grant: await revokeGrant(ctx, params.id, params.grant) });
  },
});

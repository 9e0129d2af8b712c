import { created, defineHandler, ok } from '../../lib/http/index.js';
import { createShare, listSharedWithMe, listShares, revokeShare } from './share-service.js';
import { CreateShareBody, SharedWithMeQuery, ShareIdParams, TypeIdParams } from '../../lib/sharing/schemas.js';

/** POST /api/v1/{type}/{id}/shares */
export const create = defineHandler({
  params: TypeIdParams,
  body: CreateShareBody,
  async handler({ ctx, params, body }) {
    return created({ share: await createShare(ctx, params.type, params.id, body) });
  },
});

/** GET /api/v1/{type}/{id}/shares */
export const list = defineHandler({
  params: TypeIdParams,
  async handler({ ctx, params }) {
    return ok(await listShares(ctx, params.type, params.id));
  },
});

/** DELETE /api/v1/shares/{share_id} */
export const remove = defineHandler({
  params: ShareIdParams,
  async handler({ ctx, params }) {
    return ok({ revoked: true, share: await revokeShare(ctx, params.share_id) });
  },
});

/** GET /api/v1/shared-with-me */
export const sharedWithMe = defineHandler({
  query: SharedWithMeQuery,
  async handler({ ctx, query }) {
    return ok(await listSharedWithMe(ctx, query));
  },
});

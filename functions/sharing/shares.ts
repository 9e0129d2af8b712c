import { created, defineHandler, ok } from '../../lib/http/index.js';
import { createShare, listSharedWithMe, listShares, revokeShare } from '../../lib/sharing/share.js';
import {
  CreateShareBody,
  ShareAnswer,
  SharedWithMe,
  SharedWithMeQuery,
  ShareIdParams,
  ShareList,
  ShareRevoked,
  TypeIdParams,
} from '../../lib/sharing/schemas.js';

/** POST /api/v1/{type}/{id}/shares */
export const create = defineHandler({
  summary: 'Share a resource with a user',
  description:
    'Shares one of the caller’s resources (which the caller can read) with a user of any account, by e-mail; `write` shares only for generic secrets. Containers are not shared.',
  responses: { 201: ShareAnswer },
  errors: ['not_found', 'bad_request', 'already_exists', 'conflict'],
  params: TypeIdParams,
  body: CreateShareBody,
  async handler({ ctx, params, body }) {
    return created({ share: await createShare(ctx, params.type, params.id, body) });
  },
});

/** GET /api/v1/{type}/{id}/shares */
export const list = defineHandler({
  summary: 'List a resource’s shares',
  responses: { 200: ShareList },
  errors: ['not_found'],
  params: TypeIdParams,
  async handler({ ctx, params }) {
    return ok(await listShares(ctx, params.type, params.id));
  },
});

/** DELETE /api/v1/shares/{share_id} */
export const remove = defineHandler({
  summary: 'Revoke a share',
  responses: { 200: ShareRevoked },
  errors: ['not_found'],
  params: ShareIdParams,
  async handler({ ctx, params }) {
    return ok({ revoked: true, share: await revokeShare(ctx, params.share_id) });
  },
});

/** GET /api/v1/shared-with-me */
export const sharedWithMe = defineHandler({
  summary: 'List resources shared with me',
  description: 'What other users shared with the caller’s user (metadata; read each through its `read_path`). No scope needed.',
  responses: { 200: SharedWithMe },
  query: SharedWithMeQuery,
  async handler({ ctx, query }) {
    return ok(await listSharedWithMe(ctx, query));
  },
});

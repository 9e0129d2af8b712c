import { created, defineHandler, ok } from '../../lib/http/index.js';
import { CreateTempAccessBody, GrantIdParams, TokenParams, TypeIdParams } from '../../lib/sharing/schemas.js';
import { createTempAccess, listTempAccess, publicBase, redeemTempAccess, revokeTempAccess } from './temp-service.js';

/** POST /api/v1/{type}/{id}/temp-access — the grant, and the redemption URL (shown once). */
export const create = defineHandler({
  params: TypeIdParams,
  body: CreateTempAccessBody,
  async handler({ ctx, params, body, headers }) {
    return created(await createTempAccess(ctx, params.type, params.id, body, publicBase(headers)));
  },
});

/** GET /api/v1/{type}/{id}/temp-access — the resource's grants (never a token). */
export const list = defineHandler({
  params: TypeIdParams,
  async handler({ ctx, params }) {
    return ok(await listTempAccess(ctx, params.type, params.id));
  },
});

/** DELETE /api/v1/temp-access/{grant_id} */
export const remove = defineHandler({
  params: GrantIdParams,
  async handler({ ctx, params }) {
    return ok({ revoked: true, grant: await revokeTempAccess(ctx, params.grant_id) });
  },
});

/** GET /api/v1/t/{token} — authenticated by the token itself (auth kind temp-token). */
export const redeem = defineHandler({
  params: TokenParams,
  async handler({ params, requestId, sourceIp, headers }) {
    return ok(await redeemTempAccess(params.token, { requestId, sourceIp, userAgent: headers['user-agent'] ?? null }));
  },
});

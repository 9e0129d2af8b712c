import { created, defineHandler, ok } from '../../lib/http/index.js';
import {
  CreateTempAccessBody,
  GrantIdParams,
  TempAccessCreated,
  TempAccessList,
  TempAccessRedeemed,
  TempAccessRevoked,
  TokenParams,
  TypeIdParams,
} from '../../lib/sharing/schemas.js';
import { createTempAccess, listTempAccess, publicBase, redeemTempAccess, revokeTempAccess } from '../../lib/sharing/temp.js';

/** POST /api/v1/{type}/{id}/temp-access — the grant, and the redemption URL (shown once). */
export const create = defineHandler({
  summary: 'Create a temporary access link',
  description:
    'A grant to read the resource’s value through a URL, until `expires_at` (capped by the account setting) and optionally once. The token and URL are in this response only.',
  responses: { 201: TempAccessCreated },
  errors: ['not_found', 'bad_request'],
  params: TypeIdParams,
  body: CreateTempAccessBody,
  async handler({ ctx, params, body, headers }) {
    return created(await createTempAccess(ctx, params.type, params.id, body, publicBase(headers)));
  },
});

/** GET /api/v1/{type}/{id}/temp-access — the resource's grants (never a token). */
export const list = defineHandler({
  summary: 'List a resource’s temporary access grants',
  description: 'Never a token.',
  responses: { 200: TempAccessList },
  errors: ['not_found'],
  params: TypeIdParams,
  async handler({ ctx, params }) {
    return ok(await listTempAccess(ctx, params.type, params.id));
  },
});

/** DELETE /api/v1/temp-access/{grant_id} */
export const remove = defineHandler({
  summary: 'Revoke a temporary access grant',
  description: 'Idempotent: revoking a revoked grant answers it as it is.',
  responses: { 200: TempAccessRevoked },
  errors: ['not_found'],
  params: GrantIdParams,
  async handler({ ctx, params }) {
    return ok({ revoked: true, grant: await revokeTempAccess(ctx, params.grant_id) });
  },
});

/** GET /api/v1/t/{token} — authenticated by the token itself (auth kind temp-token). */
export const redeem = defineHandler({
  summary: 'Redeem a temporary access link',
  description:
    'The token in the path is the only credential. A token never issued is 404; one expired, revoked or already used (single-use) is 410. A single-use token yields its value once, also under concurrent requests.',
  responses: { 200: TempAccessRedeemed },
  errors: ['not_found', 'temp_access_expired', 'temp_access_revoked', 'temp_access_used', 'tenant_suspended', 'conflict'],
  params: TokenParams,
  async handler({ params, requestId, sourceIp, headers }) {
    return ok(await redeemTempAccess(params.token, { requestId, sourceIp, userAgent: headers['user-agent'] ?? null }));
  },
});

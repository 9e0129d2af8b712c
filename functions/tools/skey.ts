import { requireScopes } from '../../lib/auth/scopes.js';
import { created, defineHandler, ok } from '../../lib/http/index.js';
import { IdParams, listPage, PageQuery } from '../../lib/schemas.js';
import { CreateSkeyBody, VerifySkeyBody } from '../../lib/tools/skey/schemas.js';
import { createSkey, deleteSkey, getSkey, listSkeys, verifySkey } from '../../lib/tools/skey/service.js';

/**
 * S/KEY one-time password sequences (RFC 2289; lib/tools/skey). The spec leaves the scopes
 * of GET /{id} and /verify to the handler: both need secrets:read (a verification reads the
 * sealed last OTP; like a YubiKey validation, it is a read that moves a counter).
 */
const READ = ['secrets:read'];

export const list = defineHandler({
  query: PageQuery,
  async handler({ ctx, query }) {
    const page = await listSkeys(ctx, query);
    return ok(listPage('skey_otps', page.items, page.nextCursor, query));
  },
});

export const create = defineHandler({
  body: CreateSkeyBody,
  async handler({ ctx, body }) {
    return created({ skey_otp: await createSkey(ctx, body) });
  },
});

export const get = defineHandler({
  params: IdParams,
  async handler({ ctx, params }) {
    requireScopes(ctx.principal, READ);
    return ok({ skey_otp: await getSkey(ctx, params.id) });
  },
});

export const verify = defineHandler({
  params: IdParams,
  body: VerifySkeyBody,
  async handler({ ctx, params, body }) {
    requireScopes(ctx.principal, READ);
    return ok(await verifySkey(ctx, params.id, body.otp));
  },
});

export const remove = defineHandler({
  params: IdParams,
  async handler({ ctx, params }) {
    return ok({ deleted: true, skey_otp: await deleteSkey(ctx, params.id) });
  },
});

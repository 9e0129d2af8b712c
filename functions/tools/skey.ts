import { created, defineHandler, ok } from '../../lib/http/index.js';
import { IdParams, listPage, PageQuery } from '../../lib/schemas.js';
import { CreateSkeyBody, SkeyAnswer, SkeyDeleted, SkeyPage, SkeyVerified, VerifySkeyBody } from '../../lib/tools/skey/schemas.js';
import { createSkey, deleteSkey, getSkey, listSkeys, verifySkey } from '../../lib/tools/skey/service.js';

/**
 * S/KEY one-time password sequences (RFC 2289; lib/tools/skey). The spec leaves the scopes
 * of GET /{id} and /verify to the handler: both need secrets:read (a verification reads the
 * sealed last OTP; like a YubiKey validation, it is a read that moves a counter), checked
 * before the request is validated (`scopes`).
 */
const READ = ['secrets:read'];

export const list = defineHandler({
  summary: 'List S/KEY sequences',
  responses: { 200: SkeyPage },
  errors: ['bad_request'],
  query: PageQuery,
  async handler({ ctx, query }) {
    const page = await listSkeys(ctx, query);
    return ok(listPage('skey_otps', page.items, page.nextCursor, query));
  },
});

export const create = defineHandler({
  summary: 'Create an S/KEY sequence',
  description: 'RFC 2289 one-time passwords: from a passphrase (used once, never stored) or the OTP of the starting count.',
  responses: { 201: SkeyAnswer },
  errors: ['bad_request'],
  body: CreateSkeyBody,
  async handler({ ctx, body }) {
    return created({ skey_otp: await createSkey(ctx, body) });
  },
});

export const get = defineHandler({
  summary: 'Get an S/KEY sequence',
  description: 'Its next challenge (needs secrets:read).',
  responses: { 200: SkeyAnswer },
  errors: ['not_found', 'insufficient_scope'],
  scopes: READ,
  params: IdParams,
  async handler({ ctx, params }) {
    return ok({ skey_otp: await getSkey(ctx, params.id) });
  },
});

export const verify = defineHandler({
  summary: 'Verify an S/KEY one-time password',
  description:
    'The OTP (16 hex digits or six dictionary words) must hash to the last accepted one; a success moves the sequence down. Of concurrent verifications of one OTP exactly one succeeds (needs secrets:read).',
  responses: { 200: SkeyVerified },
  errors: ['not_found', 'insufficient_scope', 'bad_request', 'otp_invalid', 'skey_exhausted', 'otp_replayed'],
  scopes: READ,
  params: IdParams,
  body: VerifySkeyBody,
  async handler({ ctx, params, body }) {
    return ok(await verifySkey(ctx, params.id, body.otp));
  },
});

export const remove = defineHandler({
  summary: 'Delete an S/KEY sequence',
  responses: { 200: SkeyDeleted },
  errors: ['not_found'],
  params: IdParams,
  async handler({ ctx, params }) {
    return ok({ deleted: true, skey_otp: await deleteSkey(ctx, params.id) });
  },
});

import { requireScopes } from '../../lib/auth/scopes.js';
import { created, defineHandler, ok } from '../../lib/http/index.js';
import { KEY_TYPES } from '../keys/types.js';
import { IdParams, ListQuery } from '../keys/schemas.js';
import { DownloadBody, DownloadQuery, EnrollBody, RenewBody, RevokeBody, type DownloadFormat } from './schemas.js';
import { download, enroll, getCertificate, listCertificates, renew, revoke } from './service.js';

/**
 * /api/v1/certificates. Scopes checked here (the route table says "handler"):
 * GET /{id} and the public downloads (pem, der, chain, crl) need certs:read; the private
 * formats (key, pkcs12) need certs:read + export:read. `{id}` may also be the account CA's
 * id (returned by the list as `certificate_authority.id`): its root, chain and CRL.
 */
const { read, export: exportScopes } = KEY_TYPES.certificate.scopes;
const PRIVATE_FORMATS: readonly DownloadFormat[] = ['key', 'pkcs12'];

export const list = defineHandler({
  query: ListQuery,
  async handler({ ctx, query }) {
    const page = await listCertificates(ctx, query);
    return ok({
      certificates: page.items,
      total: page.items.length,
      limit: query.limit,
      offset: query.offset,
      next_cursor: page.nextCursor,
      certificate_authority: page.ca,
    });
  },
});

export const get = defineHandler({
  params: IdParams,
  async handler({ ctx, params }) {
    requireScopes(ctx.principal, read);
    const { view, etag } = await getCertificate(ctx, params.id);
    return ok(view, { ETag: etag });
  },
});

export const downloadGet = defineHandler({
  params: IdParams,
  query: DownloadQuery,
  async handler({ ctx, params, query }) {
    requireScopes(ctx.principal, PRIVATE_FORMATS.includes(query.format) ? exportScopes : read);
    return ok({ download: await download(ctx, params.id, query.format) });
  },
});

export const downloadPost = defineHandler({
  params: IdParams,
  body: DownloadBody,
  async handler({ ctx, params, body }) {
    requireScopes(ctx.principal, PRIVATE_FORMATS.includes(body.format) ? exportScopes : read);
    const p12 = body.format === 'pkcs12' ? { password: body.password!, include_chain: body.include_chain, friendly_name: body.friendly_name } : undefined;
    return ok({ download: await download(ctx, params.id, body.format, p12) });
  },
});

export const enrollCertificate = defineHandler({
  body: EnrollBody,
  async handler({ ctx, body }) {
    const certificate = await enroll(ctx, body);
    return created({ certificate }, { ETag: `"${certificate.id}.${certificate.version}"` });
  },
});

export const renewCertificate = defineHandler({
  params: IdParams,
  body: RenewBody.default({}),
  async handler({ ctx, params, body }) {
    const certificate = await renew(ctx, params.id, body);
    return ok({ certificate }, { ETag: `"${certificate.id}.${certificate.version}"` });
  },
});

export const revokeCertificate = defineHandler({
  params: IdParams,
  body: RevokeBody.default({ reason: 'unspecified' }),
  async handler({ ctx, params, body }) {
    const certificate = await revoke(ctx, params.id, body);
    return ok({ certificate });
  },
});

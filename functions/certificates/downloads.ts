import { requireScopes } from '../../lib/auth/scopes.js';
import { CATALOG } from '../../lib/catalog.js';
import { DownloadBody, DownloadQuery, type DownloadFormat } from '../../lib/certificates/schemas.js';
import { defineHandler, ok } from '../../lib/http/index.js';
import { IdParams } from '../../lib/keys/schemas.js';
import { download } from './download-service.js';

/**
 * GET and POST /api/v1/certificates/{id}/download. Scopes checked here (the route table says
 * "handler"): the public downloads (pem, der, chain, crl) need certs:read; the private formats
 * (key, pkcs12) need certs:read + export:read. `{id}` may also be the account CA's id.
 */
const { read, export: exportScopes } = CATALOG.certificate.scopes;
const PRIVATE_FORMATS: readonly DownloadFormat[] = ['key', 'pkcs12'];

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
    const p12 =
      body.format === 'pkcs12' ? { password: body.password!, include_chain: body.include_chain, friendly_name: body.friendly_name } : undefined;
    return ok({ download: await download(ctx, params.id, body.format, p12) });
  },
});

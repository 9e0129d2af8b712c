import { requireScopes } from '../../lib/auth/scopes.js';
import { defineHandler, ok } from '../../lib/http/index.js';
import { listPage } from '../../lib/schemas.js';
import { CATALOG } from '../../lib/catalog.js';
import { IdParams, ListQuery } from '../../lib/keys/schemas.js';
import { getCertificate, listCertificates } from './service.js';

/**
 * /api/v1/certificates. Scopes checked here (the route table says "handler"):
 * GET /{id} and the public downloads (pem, der, chain, crl) need certs:read; the private
 * formats (key, pkcs12) need certs:read + export:read. `{id}` may also be the account CA's
 * id (returned by the list as `certificate_authority.id`): its root, chain and CRL.
 */
const { read } = CATALOG.certificate.scopes;

export const list = defineHandler({
  query: ListQuery,
  async handler({ ctx, query }) {
    const page = await listCertificates(ctx, query);
    return ok({ ...listPage('certificates', page.items, page.nextCursor, query), certificate_authority: page.ca });
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

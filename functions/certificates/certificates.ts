import { requireScopes } from '../../lib/auth/scopes.js';
import { defineHandler, ok } from '../../lib/http/index.js';
import { listPage } from '../../lib/schemas.js';
import { CATALOG } from '../../lib/catalog.js';
import { IdParams, ListQuery } from '../../lib/keys/schemas.js';
import { CertificateList, CertificateOrCa } from '../../lib/certificates/schemas.js';
import { getCertificate, listCertificates } from '../../lib/certificates/service.js';

/**
 * /api/v1/certificates. Scopes checked here (the route table says "handler"):
 * GET /{id} and the public downloads (pem, der, chain, crl) need certs:read; the private
 * formats (key, pkcs12) need certs:read + export:read. `{id}` may also be the account CA's
 * id (returned by the list as `certificate_authority.id`): its root, chain and CRL.
 */
const { read } = CATALOG.certificate.scopes;

export const list = defineHandler({
  summary: 'List certificates',
  description:
    'The account’s certificates, oldest first, with the account CA beside them (`certificate_authority`, null until the first issuance); page with `limit` and `offset` or `cursor`.',
  responses: { 200: CertificateList },
  errors: ['bad_request'],
  query: ListQuery,
  async handler({ ctx, query }) {
    const page = await listCertificates(ctx, query);
    return ok({ ...listPage('certificates', page.items, page.nextCursor, query), certificate_authority: page.ca });
  },
});

export const get = defineHandler({
  summary: 'Read a certificate',
  description: 'A certificate with its state as of now (`expired` past `not_after`); the account CA’s id answers `certificate_authority` instead.',
  responses: { 200: CertificateOrCa },
  errors: ['not_found', 'insufficient_scope'],
  params: IdParams,
  async handler({ ctx, params }) {
    requireScopes(ctx.principal, read);
    const { view, etag } = await getCertificate(ctx, params.id);
    return ok(view, { ETag: etag });
  },
});

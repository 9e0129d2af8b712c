import { requireScopes } from '../../lib/auth/scopes.js';
import { CATALOG } from '../../lib/catalog.js';
import { CertificateDownload, DownloadBody, DownloadQuery, type DownloadFormat } from '../../lib/certificates/schemas.js';
import { defineHandler, ok } from '../../lib/http/index.js';
import { IdParams } from '../../lib/keys/schemas.js';
import { download } from '../../lib/certificates/download.js';

/**
 * GET and POST /api/v1/certificates/{id}/download. Scopes checked here (the route table says
 * "handler"): the public downloads (pem, der, chain, crl) need certs:read, checked before the
 * query or body is validated; the private formats (key, pkcs12) need export:read as well.
 * `{id}` may also be the account CA's id.
 */
const { read, export: exportScopes } = CATALOG.certificate.scopes;
const PRIVATE_FORMATS: readonly DownloadFormat[] = ['key', 'pkcs12'];

export const downloadGet = defineHandler({
  summary: 'Download a certificate',
  description:
    'The certificate as PEM, DER (base64), its chain, its issuer’s CRL, or its private key (`key`, needs export:read). PKCS#12 needs a password: use POST.',
  responses: { 200: CertificateDownload },
  errors: ['not_found', 'insufficient_scope', 'no_private_key', 'not_exportable', 'no_crl', 'bad_request'],
  scopes: read,
  params: IdParams,
  query: DownloadQuery,
  async handler({ ctx, params, query }) {
    if (PRIVATE_FORMATS.includes(query.format)) requireScopes(ctx.principal, exportScopes);
    return ok({ download: await download(ctx, params.id, query.format) });
  },
});

export const downloadPost = defineHandler({
  summary: 'Download a certificate with options',
  description: 'Every format of the GET, and PKCS#12 (needs export:read) protected by `password`, with or without the chain.',
  responses: { 200: CertificateDownload },
  errors: ['not_found', 'insufficient_scope', 'no_private_key', 'not_exportable', 'no_crl'],
  scopes: read,
  params: IdParams,
  body: DownloadBody,
  async handler({ ctx, params, body }) {
    if (PRIVATE_FORMATS.includes(body.format)) requireScopes(ctx.principal, exportScopes);
    const p12 =
      body.format === 'pkcs12' ? { password: body.password!, include_chain: body.include_chain, friendly_name: body.friendly_name } : undefined;
    return ok({ download: await download(ctx, params.id, body.format, p12) });
  },
});

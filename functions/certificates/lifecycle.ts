import { created, defineHandler, ok } from '../../lib/http/index.js';
import { CertificateAnswer, EnrollBody, RenewBody, RevokeBody } from '../../lib/certificates/schemas.js';
import { IdParams } from '../../lib/keys/schemas.js';
import { enroll, renew, revoke } from '../../lib/certificates/issue.js';

/** Enrolling (the account CA or an ACME directory), renewing and revoking certificates: the routes that load the ACME client. */
export const enrollCertificate = defineHandler({
  summary: 'Enroll a certificate',
  description:
    'Issues a certificate from the account CA (created on first use) for a key generated here or for a PKCS#10 `csr`, or obtains one from an external ACME directory (`acme`, http-01).',
  responses: { 201: CertificateAnswer },
  errors: ['bad_request', 'invalid_csr', 'already_exists', 'acme_failed'],
  body: EnrollBody,
  async handler({ ctx, body }) {
    const certificate = await enroll(ctx, body);
    return created({ certificate }, { ETag: `"${certificate.id}.${certificate.version}"` });
  },
});

export const renewCertificate = defineHandler({
  summary: 'Renew a certificate',
  description:
    'Issues a new version (new serial) with the same key (`reuse_key`), a new key, or a new `csr`; the earlier serials stay in the history and are revoked with the certificate.',
  responses: { 200: CertificateAnswer },
  errors: ['not_found', 'bad_request', 'invalid_csr', 'revoked', 'acme_failed', 'stale_etag'],
  params: IdParams,
  body: RenewBody.default({}),
  async handler({ ctx, params, body }) {
    const certificate = await renew(ctx, params.id, body);
    return ok({ certificate }, { ETag: `"${certificate.id}.${certificate.version}"` });
  },
});

export const revokeCertificate = defineHandler({
  summary: 'Revoke a certificate',
  description: 'Marks the certificate revoked with `reason`; for the account CA its serials join the CRL, for ACME the directory revokes it.',
  responses: { 200: CertificateAnswer },
  errors: ['not_found', 'already_revoked', 'acme_failed'],
  params: IdParams,
  body: RevokeBody.default({ reason: 'unspecified' }),
  async handler({ ctx, params, body }) {
    const certificate = await revoke(ctx, params.id, body);
    return ok({ certificate });
  },
});

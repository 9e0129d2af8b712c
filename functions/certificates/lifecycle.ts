import { created, defineHandler, ok } from '../../lib/http/index.js';
import { EnrollBody, RenewBody, RevokeBody } from '../../lib/certificates/schemas.js';
import { IdParams } from '../../lib/keys/schemas.js';
import { enroll, renew, revoke } from './issue-service.js';

/** Enrolling (the account CA or an ACME directory), renewing and revoking certificates: the routes that load the ACME client. */
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

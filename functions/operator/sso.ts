import { defineHandler, ok } from '../../lib/http/index.js';
import { putSsoConfig, SsoBody } from '../../lib/sso/config.js';
import { SsoAnswer, TenantParams } from '../../lib/operator/schemas.js';

/** Sets an account's single sign-on (its OpenID Connect provider); the client secret is sealed and never shown again. */
export const put = defineHandler({
  summary: 'Set an account’s single sign-on',
  description:
    'The account’s OpenID Connect provider, admitted e-mail domains and claim-to-scope mappings. The client secret is sealed and never shown again.',
  responses: { 200: SsoAnswer },
  errors: ['not_found'],
  params: TenantParams,
  body: SsoBody,
  async handler({ ctx, params, body }) {
    return ok({ sso: await putSsoConfig(ctx, params.id, body) });
  },
});

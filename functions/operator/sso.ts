import { defineHandler, ok } from '../../lib/http/index.js';
import { ownerScope } from '../../lib/tenancy/scope.js';
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
    // everything in the named account's tenant session (lib/routes.ts OPERATOR_ACCOUNT_ROUTES): its
    // account item, the sealed client secret (its data key), the SSO item and the audit entry
    return ok({ sso: await ownerScope(params.id, () => putSsoConfig(ctx, params.id, body)) });
  },
});

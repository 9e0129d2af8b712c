import { defineHandler, ok } from '../../lib/http/index.js';
import { putSsoConfig, SsoBody } from '../../lib/sso/config.js';
import { TenantParams } from './schemas.js';

/** Sets an account's single sign-on (its OpenID Connect provider); the client secret is sealed and never shown again. */
export const put = defineHandler({
  params: TenantParams,
  body: SsoBody,
  async handler({ ctx, params, body }) {
    return ok({ sso: await putSsoConfig(ctx, params.id, body) });
  },
});

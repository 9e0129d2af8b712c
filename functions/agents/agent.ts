import { grantFor, readGrantedSecret, readIdentity } from '../../lib/agents/access.js';
import { issueGrantedLease, resolveGrantedVariables, VariablesBody } from '../../lib/agents/integrations.js';
import { defineHandler, ok } from '../../lib/http/index.js';
import { AccessBody, AliasParams } from './schemas.js';

/** Signed device requests (auth kind `device`: lib/auth/device-signature.ts). */

export const identity = defineHandler({
  async handler({ ctx }) {
    return ok({ identity: await readIdentity(ctx) });
  },
});

export const access = defineHandler({
  params: AliasParams,
  body: AccessBody,
  async handler({ ctx, params, body }) {
    const grant = await grantFor(ctx, params.alias, 'agent.access');
    if (grant.service === 'secret.read') return ok(await readGrantedSecret(ctx, grant));
    return ok(await issueGrantedLease(ctx, grant, body?.ttl_seconds));
  },
});

export const resolveVariables = defineHandler({
  body: VariablesBody,
  async handler({ ctx, body }) {
    return ok(await resolveGrantedVariables(ctx, body));
  },
});

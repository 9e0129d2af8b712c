import { grantFor, readGrantedSecret } from '../../lib/agents/access.js';
import { issueGrantedLease } from '../../lib/agents/lease.js';
import { defineHandler, ok } from '../../lib/http/index.js';
import { AccessAnswer, AccessBody, AliasParams } from '../../lib/agents/schemas.js';

/**
 * POST /api/v1/agent/access/{alias} (a signed device request): a `secret.read` grant returns
 * the value; a `database.issue` grant issues a lease, the one device route that loads the
 * database drivers.
 */
export const access = defineHandler({
  summary: 'Use a granted alias (device)',
  description:
    'A signed device request. A `secret.read` grant answers the resource’s value; a `database.issue` grant issues a database lease (`ttl_seconds` capped by the role). Every access is audited with the device as the actor; an alias the profile does not grant is 403 `not_granted` (audited as denied).',
  responses: { 200: AccessAnswer },
  errors: ['not_granted', 'profile_disabled', 'not_found', 'bad_request', 'service_unavailable'],
  params: AliasParams,
  body: AccessBody,
  async handler({ ctx, params, body }) {
    const grant = await grantFor(ctx, params.alias, 'agent.access');
    if (grant.service === 'secret.read') return ok(await readGrantedSecret(ctx, grant));
    return ok(await issueGrantedLease(ctx, grant, body?.ttl_seconds));
  },
});

import { grantFor, readGrantedSecret } from '../../lib/agents/access.js';
import { issueGrantedLease } from '../../lib/agents/lease.js';
import { defineHandler, ok } from '../../lib/http/index.js';
import { AccessBody, AliasParams } from './schemas.js';

/**
 * POST /api/v1/agent/access/{alias} (a signed device request): a `secret.read` grant returns
 * the value; a `database.issue` grant issues a lease, the one device route that loads the
 * database drivers.
 */
export const access = defineHandler({
  params: AliasParams,
  body: AccessBody,
  async handler({ ctx, params, body }) {
    const grant = await grantFor(ctx, params.alias, 'agent.access');
    if (grant.service === 'secret.read') return ok(await readGrantedSecret(ctx, grant));
    return ok(await issueGrantedLease(ctx, grant, body?.ttl_seconds));
  },
});

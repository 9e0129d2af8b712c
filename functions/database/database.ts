import { created, defineHandler, ok } from '../../lib/http/index.js';
import { issueLease, revokeLease } from '../../lib/database/leases.js';
import { rotateRoleConnection } from '../../lib/database/rotate.js';
import { IssueBody, LeaseParams, RoleParams, RotateBody } from './schemas.js';

/** POST /api/v1/database/roles/{id}/credentials → 201 {lease_id, username, password, expires_at, ttl_seconds}. */
export const issue = defineHandler({
  params: RoleParams,
  body: IssueBody,
  async handler({ ctx, params, body }) {
    const lease = await issueLease(ctx, params.id, body.ttl_seconds === undefined ? {} : { ttlSeconds: body.ttl_seconds });
    return created(lease);
  },
});

/** DELETE /api/v1/database/leases/{id} → 200 {lease}; a second call → 200 with already_revoked: true. */
export const revoke = defineHandler({
  params: LeaseParams,
  async handler({ ctx, params }) {
    return ok({ lease: await revokeLease(ctx, params.id) });
  },
});

/** POST /api/v1/database/roles/{id}/rotate → 200 {rotation}: the connection's admin password; leases untouched. */
export const rotate = defineHandler({
  params: RoleParams,
  body: RotateBody,
  async handler({ ctx, params }) {
    return ok({ rotation: await rotateRoleConnection(ctx, params.id) });
  },
});

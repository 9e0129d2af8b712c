import { created, defineHandler, ok } from '../../lib/http/index.js';
import { issueLease, revokeLease } from '../../lib/database/leases.js';
import { rotateRoleConnection } from '../../lib/database/rotate.js';
import { IssueBody, IssuedLease, LeaseParams, LeaseRevoked, RoleParams, Rotation, RotateBody } from '../../lib/database/schemas.js';

/** POST /api/v1/database/roles/{id}/credentials → 201 {lease_id, username, password, expires_at, ttl_seconds}. */
export const issue = defineHandler({
  summary: 'Issue database credentials',
  description:
    'Creates a database user for the role with a lease (`ttl_seconds`, default the role’s, at most its maximum); the password is in this answer only. The user is dropped when the lease is revoked or expires.',
  responses: { 201: IssuedLease },
  errors: ['bad_request', 'service_unavailable'],
  params: RoleParams,
  body: IssueBody,
  async handler({ ctx, params, body }) {
    const lease = await issueLease(ctx, params.id, body.ttl_seconds === undefined ? {} : { ttlSeconds: body.ttl_seconds });
    return created(lease);
  },
});

/** DELETE /api/v1/database/leases/{id} → 200 {lease}; a second call → 200 with already_revoked: true. */
export const revoke = defineHandler({
  summary: 'Revoke a database lease',
  description: 'Drops the lease’s database user; revoking a revoked lease answers 200 with `already_revoked: true`.',
  responses: { 200: LeaseRevoked },
  errors: ['service_unavailable'],
  params: LeaseParams,
  async handler({ ctx, params }) {
    return ok({ lease: await revokeLease(ctx, params.id) });
  },
});

/** POST /api/v1/database/roles/{id}/rotate → 200 {rotation}: the connection's admin password; leases untouched. */
export const rotate = defineHandler({
  summary: 'Rotate a database connection’s password',
  description: 'Changes the admin password of the role’s connection; outstanding leases keep working.',
  responses: { 200: Rotation },
  errors: ['rotation_in_progress', 'stale_etag', 'service_unavailable'],
  params: RoleParams,
  body: RotateBody,
  async handler({ ctx, params }) {
    return ok({ rotation: await rotateRoleConnection(ctx, params.id) });
  },
});

import * as z from 'zod/v4';
import { Timestamp } from '../schemas.js';

export const RoleParams = z.strictObject({ id: z.uuid() });
export const LeaseParams = z.strictObject({ id: z.uuid() });

/** POST /database/roles/{id}/credentials: the lease's lifetime (default: the role's default_ttl_seconds; at most its max_ttl_seconds). */
export const IssueBody = z
  .strictObject({
    ttl_seconds: z.number().int().min(1).max(31_536_000).optional(),
  })
  .optional()
  .transform((b) => b ?? {});

/** POST /database/roles/{id}/rotate takes no fields. */
export const RotateBody = z
  .strictObject({})
  .optional()
  .transform((b) => b ?? {});

/* Responses (lib/http/define-handler.ts `HandlerDoc`): what the dynamic database credential routes answer. */

/** A lease just issued: the database user exists until `expires_at` (lib/database/leases.ts `IssuedLease`). */
export const IssuedLease = z.strictObject({
  lease_id: z.uuid(),
  username: z.string().describe('The database user created for this lease.'),
  password: z.string().describe('Its password: in this answer only.'),
  expires_at: Timestamp,
  ttl_seconds: z.int().min(1),
});

/** A revoked lease; `already_revoked` when an earlier call (or the sweeper) had revoked it. */
export const LeaseRevoked = z.strictObject({
  lease: z.strictObject({
    lease_id: z.uuid(),
    role_id: z.uuid(),
    username: z.string(),
    status: z.literal('revoked'),
    expires_at: Timestamp,
    revoked_at: Timestamp,
    already_revoked: z.boolean(),
  }),
});

/** A rotation of the role's connection password (lib/database/rotate.ts `RotationResult`). */
export const Rotation = z.strictObject({
  rotation: z.strictObject({
    role_id: z.uuid(),
    connection_id: z.uuid(),
    connection_version: z.int().min(1),
    rotated_at: Timestamp,
    outstanding_leases: z.int().min(0),
    leases_revoked: z.literal(false).describe('Rotation never revokes leases.'),
    note: z.string(),
  }),
});

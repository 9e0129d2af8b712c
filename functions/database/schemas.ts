import * as z from 'zod/v4';

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

import * as z from 'zod/v4';
import { ACTOR_TYPES } from '../../lib/auth/principal.js';
import { Limit, OptionalCursor } from '../../lib/schemas.js';

const Time = z.iso.datetime({ offset: true }).transform((t) => Date.parse(t));
const Text = z.string().trim().min(1).max(256);

const Filters = {
  actor: Text.optional(),
  actor_type: z.enum(ACTOR_TYPES).optional(),
  action: z
    .string()
    .max(128)
    .regex(/^[a-z0-9_.*-]+$/i, 'letters, digits, . _ - and a trailing *')
    .refine((a) => !a.slice(0, -1).includes('*'), { message: '* only at the end' })
    .optional(),
  resource_type: Text.optional(),
  resource_id: Text.optional(),
  outcome: z.enum(['success', 'denied', 'failure']).optional(),
  from: Time.optional(),
  to: Time.optional(),
};

const ordered = (q: { from?: number; to?: number }) => q.from === undefined || q.to === undefined || q.from <= q.to;
const orderMsg = { message: 'from must not be after to', path: ['from'] };

export const AuditListQuery = z
  .strictObject({
    ...Filters,
    limit: Limit(),
    cursor: OptionalCursor,
  })
  .refine(ordered, orderMsg);
export type AuditListQuery = z.infer<typeof AuditListQuery>;

export const AdminAuditQuery = z
  .strictObject({
    ...Filters,
    tenant_id: z.uuid().optional(),
    limit: Limit(),
    cursor: OptionalCursor,
  })
  .refine(ordered, orderMsg);
export type AdminAuditQuery = z.infer<typeof AdminAuditQuery>;

/** An export covers [from, to]; by default the last 24 hours. */
export const AuditExportQuery = z
  .strictObject({
    format: z.enum(['jsonl', 'csv']).default('jsonl'),
    from: Time.optional(),
    to: Time.optional(),
    cursor: OptionalCursor,
  })
  .refine(ordered, orderMsg);
export type AuditExportQuery = z.infer<typeof AuditExportQuery>;

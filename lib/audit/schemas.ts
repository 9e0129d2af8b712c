import * as z from 'zod/v4';
import { ACTOR_TYPES } from '../auth/principal.js';
import { Limit, ListPage, OptionalCursor, Timestamp } from '../schemas.js';

const Time = z.iso.datetime({ offset: true }).transform((t) => Date.parse(t));
const Text = z.string().trim().min(1).max(256);

const Filters = {
  actor: Text.optional(),
  actor_type: z.enum(ACTOR_TYPES).optional(),
  action: z
    .string()
    .max(128)
    // one pattern, not a refinement: the description carries the rule too
    .regex(/^[a-zA-Z0-9_.-]*[a-zA-Z0-9_.*-]$/, 'letters, digits, . _ - and a trailing * (only at the end)')
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

/* Responses */

/** An audit entry as listed (lib/audit/canonical.ts `AuditEntry` plus its chain link): metadata only. */
const AuditEntrySchema = z.object({
  id: z.string(),
  time: Timestamp,
  tenant_id: z.uuid(),
  actor: z.object({
    type: z.enum(ACTOR_TYPES),
    id: z.string(),
    user: z.string().nullable().optional().describe('The signed-in user, when the actor acted for one.'),
    tenant_id: z.string().optional().describe('The actor’s own account, when it is not the entry’s (an operator).'),
  }),
  action: z.string().describe('What was done, e.g. `secret.read`.'),
  resource: z.object({ type: z.string(), id: z.string(), name: z.string().optional() }),
  outcome: z.enum(['success', 'denied', 'failure']),
  request_id: z.string().nullable(),
  source_ip: z.string().nullable(),
  user_agent: z.string().nullable(),
  detail: z.record(z.string(), z.unknown()).optional().describe('Action-specific metadata (never a value, key or token).'),
  chain: z
    .object({ seq: z.int().min(1), hash: z.string().regex(/^[0-9a-f]{64}$/) })
    .nullable()
    .describe('The entry’s place in the account’s hash chain; null until sealed.'),
});

export const AuditPage = ListPage('entries', AuditEntrySchema);

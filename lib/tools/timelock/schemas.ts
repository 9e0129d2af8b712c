import * as z from 'zod/v4';
import { Timestamp } from '../../schemas.js';

/**
 * POST /api/v1/timelocks carries three actions (the contract has two time-lock routes, so
 * the break-glass steps are actions of the POST, named by `action`; docs/api.md, "Tools"):
 * `seal` (the default) creates a time-lock, `request_release` starts a break-glass delay,
 * `veto` stops a pending one.
 */
const Seal = z.strictObject({
  action: z.literal('seal'),
  name: z.string().min(1).max(128),
  /** The value kept sealed until release_at (text, at most 64 KiB). */
  value: z
    .string()
    .min(1)
    .max(64 * 1024),
  release_at: z.iso.datetime({ offset: true }),
  /** Allows an early release after `delay_seconds`, announced by webhook and vetoable. */
  break_glass: z
    .strictObject({
      delay_seconds: z
        .number()
        .int()
        .min(1)
        .max(30 * 86400),
      /** Shamir shares of a veto key, returned once: any `threshold` of them veto a request. */
      veto_shares: z.strictObject({ shares: z.number().int().min(2).max(20), threshold: z.number().int().min(2).max(20) }).optional(),
    })
    .refine((b) => !b.veto_shares || b.veto_shares.threshold <= b.veto_shares.shares, {
      message: 'threshold must not exceed shares',
      path: ['veto_shares', 'threshold'],
    })
    .optional(),
});

const RequestRelease = z.strictObject({
  action: z.literal('request_release'),
  id: z.uuid(),
  reason: z.string().min(1).max(1024),
});

const Veto = z.strictObject({
  action: z.literal('veto'),
  id: z.uuid(),
  reason: z.string().max(1024).default(''),
  /** Veto shares of this time-lock (at least its threshold); without them the caller must hold admin:*. */
  shares: z.array(z.string().min(1).max(1024)).min(1).max(20).optional(),
});

export const TimelockBody = z
  .preprocess(
    (b) => (b && typeof b === 'object' && !Array.isArray(b) && !('action' in b) ? { ...b, action: 'seal' } : b),
    z.discriminatedUnion('action', [Seal, RequestRelease, Veto]),
  )
  // the description says the same: `seal` does not require `action` (scripts/openapi.ts defaultDiscriminator)
  .meta({ 'x-default-discriminator': { property: 'action', value: 'seal' } });
export type TimelockBody = z.infer<typeof TimelockBody>;
export type SealBody = z.infer<typeof Seal>;

/* Responses */

const TimelockSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  release_at: Timestamp,
  released: z.boolean(),
  released_by: z.enum(['time', 'break_glass']).nullable(),
  opens_at: Timestamp.describe('When the value can be read (release_at, or an earlier break-glass release).'),
  seconds_left: z.int().min(0),
  break_glass: z
    .object({
      delay_seconds: z.int().min(0),
      status: z.enum(['armed', 'pending', 'vetoed']),
      veto_threshold: z.int().nullable(),
      requested_at: Timestamp.nullable(),
      requested_by: z.string().nullable(),
      reason: z.string().nullable(),
      release_after: Timestamp.nullable(),
      vetoed_at: Timestamp.nullable(),
      vetoed_by: z.string().nullable(),
      veto_reason: z.string().nullable(),
    })
    .nullable(),
  version: z.int().min(1),
  created_at: Timestamp,
  updated_at: Timestamp,
  created_by: z.string().nullable(),
});

/** `seal` (201, with the veto shares once) and `request_release`/`veto` (200). */
export const TimelockAnswer = z.object({
  timelock: TimelockSchema,
  veto_shares: z.array(z.string()).optional().describe('Shamir shares of the veto key; shown once, at seal.'),
});

export const TimelockRead = z.object({
  timelock: TimelockSchema,
  value: z.string().nullable().describe('The sealed value once released; null before.'),
});

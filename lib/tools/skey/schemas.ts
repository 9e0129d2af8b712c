import * as z from 'zod/v4';
import { ALGORITHMS, SEED_RE } from './otp.js';
import { exactlyOneOf, ListPage, Timestamp } from '../../schemas.js';

/** Request bodies of /api/v1/skey-otps (docs/api.md, "Tools"). */
const CreateSkeyBodyFields = z.strictObject({
  name: z.string().min(1).max(128),
  algorithm: z.enum(ALGORITHMS).default('md5'),
  /** RFC 2289 §6: 1-16 alphanumeric characters; generated when absent. */
  seed: z.string().regex(SEED_RE, '1 to 16 letters or digits (RFC 2289 §6)').optional(),
  /** The sequence number of the starting OTP; the first challenge is count - 1. */
  count: z.number().int().min(1).max(10_000).default(100),
  /** RFC 2289 §6: at least 10 characters. Used once, never stored. */
  passphrase: z.string().min(10).max(1024).optional(),
  /** Instead of the passphrase: the OTP for `count`, computed by the client (hex or six words). */
  initial_otp: z.string().min(1).max(128).optional(),
});
export const CreateSkeyBody = exactlyOneOf(
  CreateSkeyBodyFields,
  ['passphrase', 'initial_otp'],
  'send exactly one of passphrase or initial_otp',
  'passphrase',
);
export type CreateSkeyBody = z.infer<typeof CreateSkeyBody>;

export const VerifySkeyBody = z.strictObject({
  /** The OTP answering the current challenge: 16 hex digits or six dictionary words. */
  otp: z.string().min(1).max(128),
});

/* Responses */

/** A sequence as the API shows it: the next challenge, or none once exhausted (never an OTP). */
const SkeySchema = z.object({
  id: z.uuid(),
  name: z.string(),
  algorithm: z.enum(ALGORITHMS),
  seed: z.string(),
  sequence: z.int().min(0).describe('The count of the next expected OTP plus one.'),
  initial_sequence: z.int().min(1),
  version: z.int().min(1),
  created_at: Timestamp,
  updated_at: Timestamp,
  last_verified_at: Timestamp.nullable(),
  created_by: z.string().nullable(),
  exhausted: z.boolean(),
  remaining: z.int().min(0).describe('One-time passwords left.'),
  challenge: z.string().nullable().describe('RFC 2289 challenge `otp-<alg> <n> <seed>`; null once exhausted.'),
});
export const SkeyPage = ListPage('skey_otps', SkeySchema, { paged: true });
export const SkeyAnswer = z.object({ skey_otp: SkeySchema });
export const SkeyVerified = z.object({ verified: z.literal(true), skey_otp: SkeySchema });
export const SkeyDeleted = z.object({ deleted: z.literal(true), skey_otp: z.object({ id: z.uuid(), name: z.string() }) });

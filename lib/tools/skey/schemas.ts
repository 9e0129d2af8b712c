import * as z from 'zod/v4';
import { ALGORITHMS, SEED_RE } from './otp.js';

/** Request bodies of /api/v1/skey-otps (docs/api.md, "Tools"). */
export const CreateSkeyBody = z
  .strictObject({
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
  })
  .refine((b) => (b.passphrase === undefined) !== (b.initial_otp === undefined), {
    message: 'send exactly one of passphrase or initial_otp',
    path: ['passphrase'],
  });
export type CreateSkeyBody = z.infer<typeof CreateSkeyBody>;

export const VerifySkeyBody = z.strictObject({
  /** The OTP answering the current challenge: 16 hex digits or six dictionary words. */
  otp: z.string().min(1).max(128),
});

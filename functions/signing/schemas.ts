import * as z from 'zod/v4';
import { Cursor, Limit } from '../../lib/schemas.js';
import { BACKEND_NAMES } from '../../lib/signing/registry.js';

/** POST /api/v1/crypto/sign (spec: "Signing request and result"). */
export const SignBody = z.strictObject({
  backend: z.enum(BACKEND_NAMES),
  key_id: z.uuid(),
  /** base64 of 1 byte to 1 MiB; decoded and range-checked by the service (400 either way). */
  message: z.string().max(2 * 1024 * 1024),
  /** Free-text purpose label, recorded in the audit entry. */
  purpose: z.string().trim().min(1).max(256),
});
export type SignBody = z.infer<typeof SignBody>;

export const ListSigningKeysQuery = z.strictObject({
  backend: z.enum(BACKEND_NAMES).optional(),
  limit: Limit(),
  cursor: Cursor.optional(),
});
export type ListSigningKeysQuery = z.infer<typeof ListSigningKeysQuery>;

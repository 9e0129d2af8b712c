import { z } from 'zod';
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
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: z.string().min(1).max(2048).optional(),
});
export type ListSigningKeysQuery = z.infer<typeof ListSigningKeysQuery>;

import * as z from 'zod/v4';
import { Cursor, ListPage, Limit, Timestamp } from '../schemas.js';
import { KEY_SPECS, SIGNING_ALGORITHMS } from './algorithms.js';
import { BACKEND_NAMES } from './registry.js';

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

/* Responses (lib/http/define-handler.ts `HandlerDoc`): what the signing routes answer. */

/** The signature of a message (lib/signing/service.ts `SignResult`). */
export const SignResult = z.strictObject({
  signature: z.string().describe('The signature, base64.'),
  algorithm: z.enum(SIGNING_ALGORITHMS),
  key_id: z.uuid(),
  audit_id: z.string().describe('The audit entry recording this signature.'),
});

/** Each backend of this deployment with its live status (lib/signing/backend.ts `BackendStatus`). */
export const BackendList = z.strictObject({
  backends: z.array(
    z.strictObject({
      name: z.enum(BACKEND_NAMES),
      configured: z.boolean(),
      reachable: z.boolean(),
      status: z.enum(['available', 'unavailable', 'error']),
      reason: z.string().optional().describe('Why it is not available, and what to do.'),
      token_label: z.string().optional(),
      key_specs: z.array(z.enum(KEY_SPECS)),
      algorithms: z.array(z.enum(SIGNING_ALGORITHMS)),
      mechanisms: z.array(z.string()).optional().describe('The PKCS#11 mechanisms signing uses that the token offers.'),
    }),
  ),
  total: z.int().min(0),
});

/** The caller's signing key handles (public facts only). */
export const SigningKeyPage = ListPage(
  'signing_keys',
  z.strictObject({
    key_id: z.uuid(),
    name: z.string(),
    backend: z.enum(BACKEND_NAMES),
    key_spec: z.enum(KEY_SPECS),
    algorithm: z.enum(SIGNING_ALGORITHMS),
    public_key: z.string().describe('The public key (PEM).'),
    fingerprint_sha256: z.string(),
    token_label: z.string().optional(),
    created_at: Timestamp,
    created_by: z.string().nullable(),
  }),
);

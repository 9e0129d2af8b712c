import * as z from 'zod/v4';
import type { CallContext } from '../auth/principal.js';
import { SIGNING_ALGORITHMS } from './algorithms.js';
import { KeySpecField, generateBackendKey } from './keys.js';

/**
 * The backend-held kinds of code-signing key, for CODE_SIGNING_BACKENDS in
 * functions/credentials/code-signing.ts: `POST /api/v1/code-signing-keys` with
 * `{"backend": "pkcs11" | "kms", "algorithm": "EC_P256" | "EC_P384" | "ED25519" |
 * "RSA_2048" | "RSA_3072" | "RSA_4096", "signing_algorithm"?: ...}` generates the key
 * inside the backend and stores only its handle and public key (no secret part), so the
 * collection's export returns the public key (and certificate chain) only.
 */
const bodyOf = <N extends string>(backend: N) =>
  z.strictObject({
    backend: z.literal(backend),
    algorithm: KeySpecField,
    /** RSA keys: RSA_PKCS1_SHA256 (default) or RSA_PSS_SHA256. */
    signing_algorithm: z.enum(SIGNING_ALGORITHMS).optional(),
  });

const entry = <N extends 'pkcs11' | 'kms'>(backend: N) => ({
  body: bodyOf(backend),
  secret: [] as readonly string[],
  async create(ctx: CallContext, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    return {
      ...(await generateBackendKey(ctx, { backend, algorithm: body.algorithm as string, signing_algorithm: body.signing_algorithm as never })),
    };
  },
});

export const HSM_CODE_SIGNING_BACKENDS = { pkcs11: entry('pkcs11'), kms: entry('kms') };

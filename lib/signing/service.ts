import { createHash } from 'node:crypto';
import type { CallContext } from '../auth/principal.js';
import { recordAudit } from '../audit/audit.js';
import { notFound, validationFailed } from '../core/errors.js';
import { logger } from '../core/logger.js';
import type { BackendStatus } from './backend.js';
import { signingError } from './errors.js';
import { SIGNING_KEY_TYPE, readSigningKey, refOf } from './keys.js';
import { signingBackend, signingBackends } from './registry.js';

/**
 * Operation-only signing (POST /api/v1/crypto/sign): the message goes to the backend that
 * holds the key, the signature comes back; key material never does.
 *
 * Order: validate (message 1 B–1 MiB after strict base64 decoding, else 400) → resolve the
 * caller's key (another account's or a missing key: 404, same body) → one device call,
 * never retried → the audit entry (purpose, key, algorithm, SHA-256 of the message; never
 * the message) → the signature with the entry's id. A device failure answers 502 and
 * leaves an entry with outcome `failure` (best effort), never one claiming success; if
 * the success entry cannot be written, the signature is not returned (500).
 */
const MIN_MESSAGE_BYTES = 1;
export const MAX_MESSAGE_BYTES = 1024 * 1024;

/** RFC 4648 §4 base64 with padding (no whitespace, no URL alphabet). */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function decodeMessage(text: string): Buffer {
  if (!BASE64.test(text)) throw validationFailed([{ path: 'body.message', message: 'must be base64 (RFC 4648, padded)' }]);
  const message = Buffer.from(text, 'base64');
  if (message.length < MIN_MESSAGE_BYTES || message.length > MAX_MESSAGE_BYTES) {
    throw validationFailed([
      { path: 'body.message', message: `must decode to ${MIN_MESSAGE_BYTES} byte to ${MAX_MESSAGE_BYTES} bytes (1 MiB); got ${message.length}` },
    ]);
  }
  return message;
}

interface SignRequest {
  readonly backend: string;
  readonly key_id: string;
  /** base64 */
  readonly message: string;
  readonly purpose: string;
}

interface SignResult {
  /** base64; ECDSA in DER (see lib/signing/algorithms.ts). */
  readonly signature: string;
  readonly algorithm: string;
  readonly key_id: string;
  readonly audit_id: string;
}

export async function signMessage(ctx: CallContext, req: SignRequest): Promise<SignResult> {
  const message = decodeMessage(req.message);
  const tenantId = ctx.principal.tenantId;
  const key = await readSigningKey(tenantId, req.key_id);
  const backend = signingBackend(req.backend);
  if (!key || !backend || key.meta.backend !== req.backend) throw notFound('signing key');
  const algorithm = key.meta.signing_algorithm;
  const resource = { type: SIGNING_KEY_TYPE, id: key.id, name: key.name };
  const detail = {
    purpose: req.purpose,
    backend: backend.name,
    algorithm,
    message_sha256: createHash('sha256').update(message).digest('hex'),
    message_bytes: message.length,
  };
  let signature: Buffer;
  try {
    signature = await backend.sign(refOf(key.meta), algorithm, message);
  } catch (error) {
    const http = signingError(error);
    await recordAudit(ctx, tenantId, { action: 'crypto.sign', resource, outcome: 'failure', detail: { ...detail, error: http.code } }).catch(
      (e: unknown) => logger.warn('failure audit entry not written', { request_id: ctx.requestId, error: e as Error }),
    );
    throw http;
  }
  const auditId = await recordAudit(ctx, tenantId, { action: 'crypto.sign', resource, detail });
  return { signature: signature.toString('base64'), algorithm, key_id: key.id, audit_id: auditId };
}

/** GET /api/v1/crypto/backends: every backend of this deployment with its live status. */
export async function listBackends(): Promise<BackendStatus[]> {
  return Promise.all([...signingBackends().values()].map((b) => b.status()));
}

import { defineHandler, ok } from '../../lib/http/index.js';
import { listPage } from '../../lib/schemas.js';
import { listSigningKeys } from '../../lib/signing/keys.js';
import { listBackends, signMessage } from '../../lib/signing/service.js';
import { BackendList, ListSigningKeysQuery, SignBody, SigningKeyPage, SignResult } from '../../lib/signing/schemas.js';

/** GET /api/v1/crypto/backends: configured backends with status, token label, mechanisms. */
export const backends = defineHandler({
  summary: 'List signing backends',
  description: 'The signing backends of this deployment (HSM over PKCS#11, KMS…) with their live status, key specs and algorithms.',
  responses: { 200: BackendList },
  async handler() {
    const list = await listBackends();
    return ok({ backends: list, total: list.length });
  },
});

/** GET /api/v1/crypto/signing-keys?backend=: the caller's account-owned key handles only. */
export const signingKeys = defineHandler({
  summary: 'List signing keys',
  description: 'The account’s key handles in the signing backends (public facts only); `backend` filters.',
  responses: { 200: SigningKeyPage },
  errors: ['bad_request'],
  query: ListSigningKeysQuery,
  async handler({ ctx, query }) {
    const page = await listSigningKeys(ctx, query);
    return ok(listPage('signing_keys', page.keys, page.nextCursor));
  },
});

/** POST /api/v1/crypto/sign: {signature, algorithm, key_id, audit_id}. Never retried. */
export const sign = defineHandler({
  summary: 'Sign a message',
  description: 'Signs the base64 message (1 byte to 1 MiB) with an account key inside its backend; audited with its purpose. Never retried.',
  responses: { 200: SignResult },
  errors: ['bad_request', 'not_found', 'service_unavailable', 'device_error'],
  body: SignBody,
  async handler({ ctx, body }) {
    return ok(await signMessage(ctx, body));
  },
});

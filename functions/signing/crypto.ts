import { defineHandler, ok } from '../../lib/http/index.js';
import { listPage } from '../../lib/schemas.js';
import { listSigningKeys } from '../../lib/signing/keys.js';
import { listBackends, signMessage } from '../../lib/signing/service.js';
import { ListSigningKeysQuery, SignBody } from './schemas.js';

/** GET /api/v1/crypto/backends: configured backends with status, token label, mechanisms. */
export const backends = defineHandler({
  async handler() {
    const list = await listBackends();
    return ok({ backends: list, total: list.length });
  },
});

/** GET /api/v1/crypto/signing-keys?backend=: the caller's account-owned key handles only. */
export const signingKeys = defineHandler({
  query: ListSigningKeysQuery,
  async handler({ ctx, query }) {
    const page = await listSigningKeys(ctx, query);
    return ok(listPage('signing_keys', page.keys, page.nextCursor));
  },
});

/** POST /api/v1/crypto/sign: {signature, algorithm, key_id, audit_id}. Never retried. */
export const sign = defineHandler({
  body: SignBody,
  async handler({ ctx, body }) {
    return ok(await signMessage(ctx, body));
  },
});

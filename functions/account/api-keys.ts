import { defineHandler, ok, created } from '../../lib/http/index.js';
import { CreateApiKeyBody } from '../../lib/account/schemas.js';
import { IdParams } from '../../lib/schemas.js';
import { createApiKey, listApiKeys, revokeApiKey } from '../../lib/account/api-keys.js';

export const list = defineHandler({
  async handler({ ctx }) {
    const keys = await listApiKeys(ctx);
    return ok({ api_keys: keys, total: keys.length });
  },
});

/** The key is in the response once; only its hash is stored. */
export const create = defineHandler({
  body: CreateApiKeyBody,
  async handler({ ctx, body }) {
    return created({ api_key: await createApiKey(ctx, body) });
  },
});

export const revoke = defineHandler({
  params: IdParams,
  async handler({ ctx, params }) {
    return ok({ api_key: await revokeApiKey(ctx, params.id) });
  },
});

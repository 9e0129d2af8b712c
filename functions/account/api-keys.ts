import { defineHandler, ok, created } from '../../lib/http/index.js';
import * as z from 'zod/v4';
import { ApiKeySchema, CreateApiKeyBody, NewApiKeySchema } from '../../lib/account/schemas.js';
import { IdParams } from '../../lib/schemas.js';
import { createApiKey, listApiKeys, revokeApiKey } from '../../lib/account/api-keys.js';

export const list = defineHandler({
  summary: 'List API keys',
  description: 'Every API key of the account, active and revoked (metadata only).',
  responses: { 200: z.object({ api_keys: z.array(ApiKeySchema), total: z.int().min(0) }) },
  async handler({ ctx }) {
    const keys = await listApiKeys(ctx);
    return ok({ api_keys: keys, total: keys.length });
  },
});

/** The key is in the response once; only its hash is stored. */
export const create = defineHandler({
  summary: 'Create an API key',
  description: 'The key is in this response only; the service keeps its hash. A key cannot hold scopes its creator lacks.',
  responses: { 201: z.object({ api_key: NewApiKeySchema }) },
  errors: ['scope_escalation', 'quota_exceeded'],
  body: CreateApiKeyBody,
  async handler({ ctx, body }) {
    return created({ api_key: await createApiKey(ctx, body) });
  },
});

export const revoke = defineHandler({
  summary: 'Revoke an API key',
  description: 'The next request with the key fails; its metadata stays listed as revoked.',
  responses: { 200: z.object({ api_key: ApiKeySchema }) },
  errors: ['not_found'],
  params: IdParams,
  async handler({ ctx, params }) {
    return ok({ api_key: await revokeApiKey(ctx, params.id) });
  },
});

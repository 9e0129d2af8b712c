import { generateApiKey, hashApiKey, publicPrefix } from '../auth/api-keys.js';
import type { CallContext } from '../auth/principal.js';
import { missingScopes } from '../auth/scopes.js';
import { commit } from '../audit/audit.js';
import { forbidden, notFound } from '../core/errors.js';
import { newId, nowIso } from '../ids.js';
import { apiKeyPuts, apiKeyRevokeItems, getApiKey, listApiKeys as listKeys, type ApiKeyMeta } from '../store/api-keys.js';
import { TxConditionFailed, type TxItem } from '../store/tx.js';
import { counterAdd } from '../store/usage.js';
import type { CreateApiKeyBody } from './schemas.js';

/** The key as shown once at creation: metadata plus the key itself. */
export type NewApiKey = ApiKeyMeta & { key: string };

/**
 * The items of a new API key. `presetKey` lets the local runtime seed a known root key
 * (SECRETS_DEV_ROOT_KEY); otherwise a random key is generated.
 */
export function apiKeyItems(
  tenantId: string,
  input: { name: string; scopes: string[]; expires_at?: string | null; created_by: string | null },
  presetKey?: string,
): { items: TxItem[]; key: NewApiKey } {
  const generated = presetKey ? { key: presetKey, prefix: publicPrefix(presetKey) } : generateApiKey();
  const meta: ApiKeyMeta = {
    id: newId(),
    name: input.name,
    prefix: generated.prefix,
    scopes: [...new Set(input.scopes)],
    status: 'active',
    created_at: nowIso(),
    created_by: input.created_by,
    expires_at: input.expires_at ?? null,
    revoked_at: null,
  };
  return { items: apiKeyPuts(tenantId, meta, hashApiKey(generated.key)), key: { ...meta, key: generated.key } };
}

export async function createApiKey(ctx: CallContext, body: CreateApiKeyBody): Promise<NewApiKey> {
  const p = ctx.principal;
  const missing = missingScopes(p.scopes, body.scopes);
  if (missing.length > 0) throw forbidden(`cannot grant scopes the caller lacks: ${missing.join(', ')}`, 'scope_escalation');
  const { items, key } = apiKeyItems(p.tenantId, { ...body, created_by: p.user });
  const counter = counterAdd(p.tenantId, 'api_keys', 1, p.tenant.quota.max_api_keys);
  try {
    await commit(ctx, p.tenantId, [...items, counter], {
      action: 'api_key.create',
      resource: { type: 'api_key', id: key.id, name: key.name },
      event: { type: 'api_key.created', data: { id: key.id, name: key.name, prefix: key.prefix, scopes: key.scopes } },
    });
  } catch (error) {
    if (error instanceof TxConditionFailed && error.index === items.length) {
      throw forbidden(`quota exceeded: at most ${p.tenant.quota.max_api_keys} API keys`, 'quota_exceeded');
    }
    throw error;
  }
  return key;
}

export const listApiKeys = (ctx: CallContext) => listKeys(ctx.principal.tenantId);

export async function revokeApiKey(ctx: CallContext, keyId: string): Promise<ApiKeyMeta> {
  const tid = ctx.principal.tenantId;
  const key = await getApiKey(tid, keyId);
  if (!key || key.status !== 'active') throw notFound('API key');
  const at = nowIso();
  try {
    await commit(ctx, tid, [...apiKeyRevokeItems(tid, keyId, key.hash, at), counterAdd(tid, 'api_keys', -1)], {
      action: 'api_key.revoke',
      resource: { type: 'api_key', id: keyId, name: key.name },
      event: { type: 'api_key.revoked', data: { id: keyId, name: key.name, prefix: key.prefix } },
    });
  } catch (error) {
    if (error instanceof TxConditionFailed) throw notFound('API key'); // revoked concurrently
    throw error;
  }
  const { hash: _hash, ...meta } = key;
  return { ...meta, status: 'revoked', revoked_at: at };
}

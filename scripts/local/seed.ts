import { hashApiKey } from '../../lib/auth/api-keys.js';
import { ADMIN_SCOPE } from '../../lib/auth/scopes.js';
import { getApiKeyAuth } from '../../lib/store/api-keys.js';
import { getTenant } from '../../lib/store/tenants.js';
import { transact } from '../../lib/store/tx.js';
import { counterAdd } from '../../lib/store/usage.js';
import { apiKeyItems } from '../../lib/account/api-keys.js';
import { createOperatorAccount } from '../../lib/operator/accounts.js';

/** The local runtime's platform-operator account (a fixed id, so restarts find it). */
export const OPERATOR_TENANT_ID = '00000000-0000-7000-8000-000000000001';
const OPERATOR = { id: OPERATOR_TENANT_ID, name: 'platform operator (local)', admin_email: 'operator@localhost' };

/**
 * Makes sure the operator account exists and, when a root key is given, that it is one of
 * its admin keys. Without a given key, the first start generates one and returns it (to be
 * printed once); later starts return null. The account is made as `npm run operator:create`
 * makes one in AWS (lib/operator/accounts.ts); `force`, because the local runtime wants its
 * own fixed-id account even in a table where `operator:create` already made another.
 */
export async function seedRoot(rootKey: string | undefined): Promise<{ key: string; created: boolean } | null> {
  if (rootKey !== undefined && rootKey.length < 16) throw new Error('SECRETS_DEV_ROOT_KEY must be at least 16 characters');
  const exists = (await getTenant(OPERATOR_TENANT_ID)) !== undefined;
  if (!exists) {
    const { api_key } = await createOperatorAccount(OPERATOR, { presetKey: rootKey, force: true, actor: 'local-runtime' });
    return { key: api_key.key, created: true };
  }
  if (rootKey === undefined || (await getApiKeyAuth(hashApiKey(rootKey)))) return null;
  const { items } = apiKeyItems(OPERATOR_TENANT_ID, { name: 'dev root key', scopes: [ADMIN_SCOPE], created_by: OPERATOR.admin_email }, rootKey);
  await transact([...items, counterAdd(OPERATOR_TENANT_ID, 'api_keys', 1)]);
  return { key: rootKey, created: false };
}

import type { CallContext } from '../auth/principal.js';
import { commit } from '../audit/audit.js';
import { config } from '../config.js';
import { badRequest, conflict, validationFailed } from '../core/errors.js';
import { nowIso } from '../ids.js';
import { accountSettings, ipAllowed, type AccountSettings, type SettingsBody } from '../settings/settings.js';
import { tableName } from '../store/client.js';
import { keys } from '../store/keys.js';
import { TxConditionFailed } from '../store/tx.js';

/**
 * PUT /api/v1/settings: each key present replaces that setting, null resets it to its
 * default; the stored map holds only what was set. Guarded against two mistakes: the
 * development-only loopback allowance where the deployment forbids it, and an API-key
 * allow-list that would lock out the very key setting it.
 */
export async function updateSettings(ctx: CallContext, body: SettingsBody): Promise<AccountSettings> {
  const p = ctx.principal;
  const tid = p.tenantId;
  if (body.webhooks?.allow_loopback && !config().WEBHOOKS_ALLOW_LOOPBACK) {
    throw validationFailed([{ path: 'body.webhooks.allow_loopback', message: 'loopback receivers are available in local development only' }]);
  }
  const list = body.api_key_ip_allowlist;
  if (list && list.length > 0 && p.kind === 'api_key' && !ipAllowed(list, ctx.sourceIp)) {
    throw badRequest(
      'the allow-list does not include the address of this request: its API key would be locked out',
      [{ path: 'body.api_key_ip_allowlist', message: `must include ${ctx.sourceIp ?? 'the caller'}` }],
      'would_lock_out',
    );
  }
  const stored: Record<string, unknown> = { ...(p.tenant.settings ?? {}) };
  for (const [k, v] of Object.entries(body)) {
    if (v === null) delete stored[k];
    else stored[k] = v;
  }
  const version = Number((p.tenant.settings as { _v?: unknown } | undefined)?._v ?? 0);
  stored._v = version + 1;
  const changed = Object.keys(body);
  try {
    await commit(
      ctx,
      tid,
      [
        {
          Update: {
            TableName: tableName(),
            Key: keys.tenant(tid),
            UpdateExpression: 'SET settings = :s, updated_at = :at',
            // optimistic: two concurrent PUTs of different settings must not lose one
            ConditionExpression:
              version === 0 ? 'attribute_exists(pk) AND (attribute_not_exists(settings) OR attribute_not_exists(settings.#v))' : 'settings.#v = :v',
            ExpressionAttributeNames: { '#v': '_v' },
            ExpressionAttributeValues: { ':s': stored, ':at': nowIso(), ...(version === 0 ? {} : { ':v': version }) },
          },
        },
      ],
      {
        action: 'settings.update',
        resource: { type: 'settings', id: tid },
        detail: { changed, settings: Object.fromEntries(changed.map((k) => [k, stored[k] ?? null])) },
        event: { type: 'settings.updated', data: { changed } },
      },
    );
  } catch (error) {
    if (error instanceof TxConditionFailed) throw conflict('the settings changed concurrently; send the request again', 'settings_conflict');
    throw error;
  }
  return accountSettings({ settings: stored });
}

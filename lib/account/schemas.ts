import * as z from 'zod/v4';
import { ScopeName } from '../auth/scope-names.js';
import { Timestamp } from '../schemas.js';

export const Name = z.string().trim().min(1).max(128);
export const Email = z
  .email()
  .max(254)
  .transform((e) => e.toLowerCase());

export const Scope = ScopeName;

export const CreateApiKeyBody = z.strictObject({
  name: Name,
  scopes: z.array(Scope).min(1).max(64),
  expires_at: z.iso
    .datetime({ offset: true })
    .refine((t) => Date.parse(t) > Date.now(), { message: 'must be in the future' })
    .optional(),
});
export type CreateApiKeyBody = z.infer<typeof CreateApiKeyBody>;

/* Responses */

/** An API key's metadata (lib/store/api-keys.ts `ApiKeyMeta`): never the key or its hash. */
export const ApiKeySchema = z.object({
  id: z.uuid(),
  name: z.string(),
  prefix: z.string().describe('The key’s public prefix, to recognise it.'),
  scopes: z.array(z.string()),
  status: z.enum(['active', 'revoked']),
  created_at: Timestamp,
  created_by: z.string().nullable(),
  expires_at: Timestamp.nullable(),
  revoked_at: Timestamp.nullable(),
});

/** A new API key: its metadata and the key itself, shown once. */
export const NewApiKeySchema = ApiKeySchema.extend({
  key: z.string().describe('The API key; shown in this response only (only its hash is stored).'),
});

const Count = z.int().min(0);

/** An account's quota (lib/store/tenants.ts `Quota`); an absent value is no limit. */
export const QuotaSchema = z.object({
  max_secrets: Count.optional(),
  max_api_keys: Count.optional(),
  max_webhooks: Count.optional(),
  max_devices: Count.optional(),
  requests_per_minute: Count.optional(),
  requests_per_minute_per_credential: Count.optional().describe('Per credential within the account; absent: the account’s rate.'),
});

/** An account as the operator sees it (lib/store/tenants.ts `Tenant`). */
export const TenantSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  admin_email: z.string(),
  status: z.enum(['active', 'suspended']),
  operator: z.boolean().describe('A platform-operator account.'),
  quota: QuotaSchema,
  settings: z.record(z.string(), z.unknown()).optional().describe('Settings set with PUT /api/v1/settings (absent: defaults).'),
  created_at: Timestamp,
  updated_at: Timestamp,
});

/** The effective account settings (lib/settings/settings.ts `AccountSettings`). */
export const AccountSettingsSchema = z.object({
  history_retention_versions: z.int().min(1).max(100),
  temp_access_max_seconds: z.int().min(60),
  webhooks: z.object({ max_attempts: z.int().min(1), timeout_seconds: z.int().min(1), allow_loopback: z.boolean() }),
  api_key_ip_allowlist: z.array(z.string()).describe('IP addresses or CIDR blocks API keys are accepted from (empty: any).'),
});

const Rate = z.object({ requests_per_minute: Count, burst: Count });
export const QuotasSchema = z.object({
  tenant_id: z.uuid(),
  quota: QuotaSchema,
  rate_limits: z.object({
    account: Rate,
    credential: Rate.nullable().describe('Per credential; null when only the account rate applies.'),
    unauthenticated_per_ip: Rate,
  }),
  over_quota: z.object({ status: z.literal(403), code: z.literal('quota_exceeded') }),
  over_rate: z.object({ status: z.literal(429), code: z.literal('rate_limited') }),
});

const Used = z.object({ used: Count, limit: Count.nullable().describe('null: no limit') });
export const UsageSchema = z.object({
  tenant_id: z.uuid(),
  secrets: Used,
  api_keys: Used,
  webhooks: Used,
  devices: Used,
  requests: z.object({
    today: Count,
    last_30_days: Count,
    by_day: z.array(z.object({ day: z.iso.date(), requests: Count })),
  }),
});

/** GET /api/v1/cli/sync: items are typed by `kind` (secret, resource, api_key, webhook). */
const SyncItem = z
  .looseObject({
    kind: z.enum(['secret', 'resource', 'api_key', 'webhook']),
    type: z.string(),
    id: z.string(),
  })
  .describe('A resource’s metadata (a generic secret’s `data` only with include_values=true).');
export const CliSyncSchema = z.object({
  full: z.boolean().describe('A full snapshot (no `since`) or the changes since the token.'),
  full_resync_required: z.literal(true).optional().describe('The token is too old: sync again without `since`.'),
  sync_token: z.string().nullable().describe('Pass as `since` on the next call.'),
  account: z
    .object({ id: z.uuid(), name: z.string(), status: z.enum(['active', 'suspended']), quota: QuotaSchema, settings: AccountSettingsSchema })
    .optional(),
  items: z.array(SyncItem),
  deleted: z.array(z.object({ type: z.string(), id: z.string() })).describe('Resources deleted since the token.'),
  total: Count,
  next_cursor: z.string().nullable(),
});

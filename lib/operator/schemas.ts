import * as z from 'zod/v4';
import { Limit as PageLimit, OptionalCursor } from '../schemas.js';
import { Email, Name, NewApiKeySchema, TenantSchema } from '../account/schemas.js';
import { atLeastOneField, ListPage, Timestamp, Uuid } from '../schemas.js';
import { ROLES } from '../users/users.js';

const Limit = z.number().int().min(0).max(100_000_000);

export const QuotaBody = atLeastOneField(
  z.strictObject({
    max_secrets: Limit.optional(),
    max_api_keys: Limit.optional(),
    max_webhooks: Limit.optional(),
    max_devices: Limit.optional(),
    requests_per_minute: Limit.min(1).optional(),
    requests_per_minute_per_credential: Limit.min(1).optional(),
  }),
  'at least one quota value is required',
);
export type QuotaBody = z.infer<typeof QuotaBody>;

export const CreateTenantBody = z.strictObject({
  name: Name,
  admin_email: Email,
  quota: QuotaBody.optional(),
});
export type CreateTenantBody = z.infer<typeof CreateTenantBody>;

export const TenantParams = z.strictObject({ id: Uuid });

export const ListTenantsQuery = z.strictObject({
  limit: PageLimit(),
  cursor: OptionalCursor,
});

/* Responses */

export const TenantPage = ListPage('tenants', TenantSchema);

export const TenantCreated = z.object({
  tenant: TenantSchema,
  api_key: NewApiKeySchema.describe('The account’s first admin API key; shown in this response only.'),
});

export const TenantAnswer = z.object({ tenant: TenantSchema });

const UserView = z.object({
  email: z.string(),
  role: z.enum(ROLES),
  scopes: z.array(z.string()).describe('The scopes the user’s sessions carry.'),
  source: z.enum(['admin', 'sso']).describe('`admin`: named at creation; `sso`: admitted by the identity provider.'),
  password: z.boolean().describe('Whether the user has a password (never the verifier).'),
  created_at: Timestamp,
  last_sign_in_at: Timestamp.nullable(),
});
export const UserList = z.object({ users: z.array(UserView), total: z.int().min(0) });

export const PasswordReset = z.object({
  tenant_id: z.uuid(),
  email: z.string(),
  reset_token: z.string().describe('Single-use; shown in this response only.'),
  expires_at: Timestamp,
  sessions_ended: z.int().min(0).describe('The user’s open sessions ended by the reset.'),
});

export const SsoAnswer = z.object({
  sso: z.object({
    issuer: z.string(),
    client_id: z.string(),
    client_secret_set: z.literal(true).describe('The client secret is sealed and never shown.'),
    allowed_domains: z.array(z.string()),
    default_scopes: z.array(z.string()),
    claim_mappings: z.array(z.object({ claim: z.string(), value: z.string(), scopes: z.array(z.string()) })),
    updated_at: Timestamp,
  }),
});

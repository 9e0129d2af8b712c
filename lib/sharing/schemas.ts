import * as z from 'zod/v4';
import { TEMP_ACCESS_CEILING_SECONDS } from '../settings/settings.js';
import { Limit, Offset, Timestamp } from '../schemas.js';
import { PERMISSIONS } from './store/shares.js';

/** `{type}`: a singular internal type name (lib/catalog.ts; an unknown one is a 404). */
const TypeName = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z][a-z0-9_]*$/, 'a singular internal type name such as password or ssh_key');

export const TypeIdParams = z.strictObject({ type: TypeName, id: z.uuid() });
export type TypeIdParams = z.infer<typeof TypeIdParams>;

export const VersionNumber = z
  .string()
  .regex(/^[1-9][0-9]{0,9}$/, 'a version number (1 or more)')
  .transform(Number);

export const TypeIdVersionParams = z.strictObject({ type: TypeName, id: z.uuid(), version: VersionNumber });

/** The most versions a resource may keep (a settings change prunes in one transaction). */
export const MAX_KEEP_VERSIONS = 50;

export const HistorySettingsBody = z.strictObject({
  keep_versions: z.number().int().min(1).max(MAX_KEEP_VERSIONS),
});

export const Email = z
  .string()
  .trim()
  .max(254)
  .pipe(z.email())
  .transform((e) => e.toLowerCase());

export const CreateShareBody = z.strictObject({
  shared_with_email: Email,
  /** `read` (default): read the current value; `write`: also update it (generic secrets). */
  permission: z.enum(PERMISSIONS).default('read'),
});
export type CreateShareBody = z.infer<typeof CreateShareBody>;

export const ShareIdParams = z.strictObject({ share_id: z.uuid() });
export const GrantIdParams = z.strictObject({ grant_id: z.uuid() });

/**
 * Temporary access lasts at least one minute and at most the account's
 * `temp_access_max_seconds` (default one day; checked on creation), never more than 30 days.
 */
const MIN_TEMP_SECONDS = 60;

export const CreateTempAccessBody = z.strictObject({
  duration_seconds: z.number().int().min(MIN_TEMP_SECONDS).max(TEMP_ACCESS_CEILING_SECONDS),
  /** Single-use (default, like Vault response wrapping) or any number of redemptions until expiry. */
  single_use: z.boolean().default(true),
});
export type CreateTempAccessBody = z.infer<typeof CreateTempAccessBody>;

/** A temporary-access token: `sct_` and 43 base64url characters (256 random bits). */
export const TEMP_TOKEN_RE = /^sct_[A-Za-z0-9_-]{43}$/;
export const TokenParams = z.strictObject({ token: z.string().max(256) });

export const SharedWithMeQuery = z.strictObject({
  limit: Limit(),
  offset: Offset,
});

/* Responses */

const Meta = z.record(z.string(), z.unknown()).describe('The resource’s public metadata.');
const CreatedBy = z.string().nullable();

/** The public view of a resource's head (lib/sharing/views.ts): never the sealed value. */
const ResourceViewSchema = z.object({
  type: z.string(),
  id: z.uuid(),
  name: z.string(),
  version: z.int().min(1),
  meta: Meta,
  container_id: z.uuid().nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
  created_by: CreatedBy,
  updated_by: CreatedBy,
});

export const HistoryList = z.object({
  type: z.string(),
  id: z.uuid(),
  name: z.string(),
  current_version: z.int().min(1),
  keep_versions: z.int().min(1),
  versions: z.array(
    z.object({
      version: z.int().min(1),
      name: z.string(),
      meta: Meta,
      created_at: Timestamp,
      created_by: CreatedBy,
      has_value: z.boolean(),
      current: z.boolean(),
    }),
  ),
  total: z.int().min(0),
});

export const HistoryVersion = z.object({
  version: z.object({
    type: z.string(),
    id: z.uuid(),
    version: z.int().min(1),
    name: z.string(),
    meta: Meta,
    created_at: Timestamp,
    created_by: CreatedBy,
    has_value: z.boolean(),
    value_redacted: z.boolean().describe('True when the caller lacks the type’s read scope (`missing_scopes`).'),
    missing_scopes: z.array(z.string()).optional(),
    data: z.unknown().optional().describe('The version’s value, with the type’s read scope.'),
  }),
});

export const HistorySettings = z.object({
  settings: z.object({
    type: z.string(),
    id: z.uuid(),
    keep_versions: z.int().min(1),
    default_keep_versions: z.int().min(1),
    max_keep_versions: z.int().min(1),
    current_version: z.int().min(1),
    stored_versions: z.int().min(0),
  }),
});

export const HistorySettingsSet = z.object({
  settings: z.object({
    type: z.string(),
    id: z.uuid(),
    keep_versions: z.int().min(1),
    previous_keep_versions: z.int().min(1),
    pruned_versions: z.array(z.int().min(1)).describe('The versions deleted because they fall outside the new window.'),
    current_version: z.int().min(1),
  }),
});

const ShareSchema = z.object({
  id: z.uuid(),
  type: z.string(),
  resource_id: z.uuid(),
  resource_name: z.string(),
  shared_with_email: z.string(),
  permission: z.enum(PERMISSIONS),
  created_at: Timestamp,
  created_by: CreatedBy,
});
export const ShareAnswer = z.object({ share: ShareSchema });
export const ShareList = z.object({ shares: z.array(ShareSchema), total: z.int().min(0) });
export const ShareRevoked = z.object({ revoked: z.literal(true), share: ShareSchema.extend({ revoked_at: Timestamp }) });
export const SharedWithMe = z.object({
  shared_with: z.string().nullable().describe('The caller’s user e-mail (null: a credential without a user has no shares).'),
  shares: z.array(
    ShareSchema.extend({
      owner_tenant_id: z.uuid(),
      read_path: z.string().nullable().describe('Where to read the shared resource.'),
    }),
  ),
  total: z.int().min(0),
});

const TempGrantSchema = z.object({
  id: z.uuid(),
  type: z.string(),
  resource_id: z.uuid(),
  resource_name: z.string(),
  single_use: z.boolean(),
  expires_at: Timestamp,
  status: z.enum(['active', 'expired', 'revoked', 'used']),
  uses: z.int().min(0),
  created_at: Timestamp,
  created_by: CreatedBy,
  revoked_at: Timestamp.nullable(),
  first_used_at: Timestamp.nullable(),
  last_used_at: Timestamp.nullable(),
});
export const TempAccessCreated = z.object({
  grant: TempGrantSchema,
  url: z.string().describe('The redemption URL (GET, no other credential); shown in this response only.'),
  token: z.string().regex(TEMP_TOKEN_RE).describe('The token in the URL; shown in this response only.'),
});
export const TempAccessList = z.object({ grants: z.array(TempGrantSchema), total: z.int().min(0) });
export const TempAccessRevoked = z.object({ revoked: z.literal(true), grant: TempGrantSchema });
export const TempAccessRedeemed = z.object({
  resource: ResourceViewSchema,
  data: z.unknown().describe('The resource’s value.'),
  grant: TempGrantSchema,
});

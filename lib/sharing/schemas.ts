import * as z from 'zod/v4';
import { TEMP_ACCESS_CEILING_SECONDS } from '../settings/settings.js';
import { Limit, Offset } from '../schemas.js';
import { PERMISSIONS } from './shares.js';

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

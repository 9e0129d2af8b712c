import * as z from 'zod/v4';
import { Cursor, Limit } from '../../lib/schemas.js';
import { RESOURCE_TYPES } from '../../lib/catalog.js';
import { VersionNumber } from '../../lib/sharing/schemas.js';

const Ref = z.string().min(1).max(128);
/** A key is a resource's name inside its container (one path segment). */
const Key = z.string().min(1).max(256);

export const LookupParams = z.strictObject({ container: Ref, key: Key });
export const LookupVersionParams = z.strictObject({ container: Ref, key: Key, version: VersionNumber });

const KEY_TYPES = RESOURCE_TYPES.filter((t) => t.key).map((t) => t.type) as [string, ...string[]];

export const KeyCatalogQuery = z.strictObject({
  limit: Limit(),
  cursor: Cursor.optional(),
  type: z.enum(KEY_TYPES).optional(),
});
export type KeyCatalogQuery = z.infer<typeof KeyCatalogQuery>;

const TYPES = RESOURCE_TYPES.map((t) => t.type) as [string, ...string[]];

export const SemanticSearchBody = z.strictObject({
  query: z.string().trim().min(1).max(256),
  limit: z.number().int().min(1).max(100).default(10),
  /** Restrict to these types (singular internal names). */
  types: z.array(z.enum(TYPES)).min(1).max(TYPES.length).optional(),
});
export type SemanticSearchBody = z.infer<typeof SemanticSearchBody>;

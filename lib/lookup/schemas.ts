import * as z from 'zod/v4';
import { Cursor, ListPage, Limit, Timestamp } from '../schemas.js';
import { RESOURCE_TYPES } from '../catalog.js';
import { VersionNumber } from '../sharing/schemas.js';

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

/* Responses (lib/http/define-handler.ts `HandlerDoc`): what the lookup routes answer. */

const ResourceType = z.enum(TYPES).describe('The resource’s type (lib/catalog.ts).');
const ContainerRef = z.strictObject({ id: z.uuid(), name: z.string() });
const Value = z
  .unknown()
  .describe('The resource’s secret part as its type stores it (a secret’s fields, a credential’s secret fields); null when none.');

/** A container member found by its key: its metadata (lib/sharing/views.ts `resourceView`) and its value. */
export const LookupAnswer = z.strictObject({
  container: ContainerRef,
  key: z.string(),
  resource: z.strictObject({
    type: ResourceType,
    id: z.uuid(),
    name: z.string(),
    version: z.int().min(1),
    meta: z.record(z.string(), z.unknown()).describe('The resource’s public metadata.'),
    container_id: z.uuid().nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
    created_by: z.string().nullable(),
    updated_by: z.string().nullable(),
  }),
  data: Value,
});

/** One version of a container member. */
export const LookupVersionAnswer = z.strictObject({
  container: ContainerRef,
  key: z.string(),
  resource: z.strictObject({
    type: ResourceType,
    id: z.uuid(),
    name: z.string(),
    version: z.int().min(1),
    meta: z.record(z.string(), z.unknown()),
    created_at: Timestamp,
    created_by: z.string().nullable(),
  }),
  current_version: z.int().min(1),
  data: Value,
});

/** A semantic search's ranked results (metadata only). */
export const SearchAnswer = z.strictObject({
  query: z.string(),
  ranker: z.string().describe('The ranking method.'),
  results: z.array(
    z.strictObject({
      type: ResourceType,
      id: z.uuid(),
      name: z.string(),
      description: z.string(),
      tags: z.array(z.string()),
      container_id: z.uuid().nullable(),
      score: z.number().min(0),
    }),
  ),
  total: z.int().min(0),
  searched: z.strictObject({
    documents: z.int().min(0).describe('How many resources were ranked.'),
    types: z.array(ResourceType).describe('The types searched: those asked for whose read scope the caller holds.'),
    truncated: z.boolean().describe('True when the account holds more resources than one search ranks (10 000).'),
  }),
});

/** The key catalogue: every key-like resource's public facts. */
export const KeyCatalogPage = ListPage(
  'keys',
  z.strictObject({
    type: z.enum(KEY_TYPES),
    id: z.uuid(),
    name: z.string(),
    algorithm: z.string().nullable(),
    bits: z.int().nullable(),
    curve: z.string().nullable(),
    fingerprint: z.string().nullable(),
    has_private_key: z.boolean().nullable(),
    status: z.string().nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
    expires_at: z.string().nullable(),
    container_id: z.uuid().nullable(),
  }),
);

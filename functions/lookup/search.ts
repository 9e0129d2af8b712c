import type { CallContext } from '../../lib/auth/principal.js';
import { hasScope } from '../../lib/auth/scopes.js';
import { defineHandler, ok } from '../../lib/http/index.js';
import { RESOURCE_TYPES, resourceType } from '../../lib/catalog.js';
import { keys } from '../../lib/store/keys.js';
import { queryAll } from '../../lib/store/pagination.js';
import { tfidfRanker, type SearchDocument, type SearchRanker } from '../../lib/lookup/ranker.js';
import { SearchAnswer, SemanticSearchBody } from '../../lib/lookup/schemas.js';

/**
 * POST /api/v1/search/semantic: ranks the account's resources of every type against a
 * free-text query, over their names, descriptions, tags and types — read with projections
 * that never include a value — through the SearchRanker port (lib/lookup/ranker.ts).
 * Only types whose read scope the caller holds are searched. At most MAX_DOCUMENTS heads are
 * ranked per request (the index is built per request: no copy of the metadata is kept).
 */
const MAX_DOCUMENTS = 10_000;

const ranker: SearchRanker = tfidfRanker;

const collect = (tenantId: string, prefix: string, projection: readonly string[], max: number) =>
  queryAll({ pk: keys.tenant(tenantId).pk, sk: { prefix }, projection }, max);

/** The searchable metadata of the caller's resources of the given types. */
async function documents(tenantId: string, types: ReadonlySet<string>): Promise<{ docs: SearchDocument[]; truncated: boolean }> {
  const docs: SearchDocument[] = [];
  const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  let truncated = false;
  if (types.has('secret')) {
    const items = await collect(tenantId, keys.secretPrefix, ['id', 'name', 'meta.description', 'meta.tags', 'container_id'], MAX_DOCUMENTS);
    for (const i of items) {
      const meta = (i.meta ?? {}) as Record<string, unknown>;
      docs.push({
        type: 'secret',
        id: i.id as string,
        name: i.name as string,
        description: (meta.description as string) ?? '',
        tags: strings(meta.tags),
        container_id: (i.container_id as string) ?? null,
      });
    }
  }
  if ([...types].some((t) => t !== 'secret') && docs.length < MAX_DOCUMENTS) {
    // every other type's head is under R#<type>#: one query for all of them, metadata fields only
    const items = await collect(tenantId, 'R#', ['type', 'id', 'name', 'container_id', 'meta.description', 'meta.tags'], MAX_DOCUMENTS - docs.length);
    for (const i of items) {
      const type = i.type as string;
      if (!types.has(type)) continue;
      const meta = (i.meta ?? {}) as Record<string, unknown>;
      docs.push({
        type,
        id: i.id as string,
        name: (i.name as string) ?? '',
        description: typeof meta.description === 'string' ? meta.description : '',
        tags: strings(meta.tags),
        container_id: (i.container_id as string) ?? null,
      });
    }
  }
  truncated = docs.length >= MAX_DOCUMENTS;
  return { docs, truncated };
}

async function semanticSearch(ctx: CallContext, body: SemanticSearchBody) {
  const wanted = body.types ?? RESOURCE_TYPES.map((t) => t.type);
  const readable = new Set(wanted.filter((t) => resourceType(t)!.scopes.read.every((s) => hasScope(ctx.principal.scopes, s))));
  const { docs, truncated } = await documents(ctx.principal.tenantId, readable);
  const ranked = await ranker.rank(body.query, docs, body.limit);
  return {
    query: body.query,
    ranker: ranker.name,
    results: ranked.map(({ doc, score }) => ({ ...doc, tags: [...doc.tags], score: Math.round(score * 10_000) / 10_000 })),
    total: ranked.length,
    searched: { documents: docs.length, types: [...readable].sort(), truncated },
  };
}

export const search = defineHandler({
  summary: 'Search resources by meaning',
  description:
    'Ranks the account’s resources of every type (or of `types`) against a free-text query over their names, descriptions, tags and types; never over values. Only types whose read scope the caller holds are searched.',
  responses: { 200: SearchAnswer },
  body: SemanticSearchBody,
  async handler({ ctx, body }) {
    return ok(await semanticSearch(ctx, body));
  },
});

import type { CallContext } from '../../lib/auth/principal.js';
import { badRequest, defineHandler, ok } from '../../lib/http/index.js';
import { RESOURCE_TYPES } from '../../lib/catalog.js';
import { readPage } from '../../lib/store/pagination.js';
import { keys } from '../../lib/store/keys.js';
import { KeyCatalogPage, KeyCatalogQuery } from '../../lib/lookup/schemas.js';

/**
 * GET /api/v1/key-catalog: one listing of every key-like resource of the account — each
 * type flagged `key: true` in lib/catalog.ts — from the heads' public metadata only
 * (the projection never reads the sealed `value`; the public key itself is left out too).
 * Ordered by type (registry order), then id (creation order); `next_cursor` continues.
 */
const KEY_TYPES = RESOURCE_TYPES.filter((t) => t.key).map((t) => t.type);

// nested projection: only the catalogue's fields of `meta` are read
const TOP = ['type', 'id', 'name', 'container_id', 'created_at', 'updated_at'];
const META = ['algorithm', 'bits', 'curve', 'fingerprint', 'expires_at', 'not_after', 'has_private_key', 'status'];
const PROJECTION = [...TOP, ...META.map((f) => `meta.${f}`)];

/** A position: the type being listed and the sort key of the last item returned (null: from its start). */
interface Cursor {
  readonly t: string;
  readonly c: string | null;
}

const encode = (c: Cursor) => Buffer.from(JSON.stringify(c), 'utf8').toString('base64url');
function decode(cursor: string): Cursor {
  try {
    const c = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<Cursor>;
    if (
      typeof c.t === 'string' &&
      KEY_TYPES.includes(c.t) &&
      (c.c === null || (typeof c.c === 'string' && c.c.startsWith(keys.resourcePrefix(c.t))))
    ) {
      return c as Cursor;
    }
  } catch {
    // fall through
  }
  throw badRequest('invalid cursor', [{ path: 'query.cursor', message: 'not a cursor returned by this list' }]);
}

type Item = Record<string, unknown> & { meta?: Record<string, unknown> };

const entry = (i: Item) => {
  const m = i.meta ?? {};
  return {
    type: i.type as string,
    id: i.id as string,
    name: i.name as string,
    algorithm: (m.algorithm as string | undefined) ?? null,
    bits: (m.bits as number | undefined) ?? null,
    curve: (m.curve as string | undefined) ?? null,
    fingerprint: (m.fingerprint as string | undefined) ?? null,
    has_private_key: (m.has_private_key as boolean | undefined) ?? null,
    status: (m.status as string | undefined) ?? null,
    created_at: i.created_at as string,
    updated_at: i.updated_at as string,
    expires_at: (m.expires_at as string | undefined) ?? (m.not_after as string | undefined) ?? null,
    container_id: (i.container_id as string | null | undefined) ?? null,
  };
};

/** Up to `limit` heads of one type after `after` (sort key); `more` when DynamoDB did not finish. */
async function page(tenantId: string, type: string, limit: number, after: string | null): Promise<{ items: Item[]; more: boolean }> {
  const pk = keys.tenant(tenantId).pk;
  return readPage({ pk, sk: { prefix: keys.resourcePrefix(type) }, projection: PROJECTION }, limit, { start: after ? { pk, sk: after } : undefined });
}

async function keyCatalog(ctx: CallContext, query: KeyCatalogQuery) {
  const types = query.type ? [query.type] : KEY_TYPES;
  const from = query.cursor ? decode(query.cursor) : { t: types[0]!, c: null };
  const first = types.indexOf(from.t);
  if (first < 0) throw badRequest('invalid cursor', [{ path: 'query.cursor', message: 'not a cursor of this listing' }]);
  const out: ReturnType<typeof entry>[] = [];
  let next: Cursor | undefined;
  for (let index = first; index < types.length; index++) {
    const type = types[index]!;
    const got = await page(ctx.principal.tenantId, type, query.limit - out.length, index === first ? from.c : null);
    out.push(...got.items.map(entry));
    if (got.more && got.items.length > 0) {
      next = { t: type, c: got.items.at(-1)!.sk as string };
      break;
    }
    if (out.length >= query.limit) {
      if (index + 1 < types.length) next = { t: types[index + 1]!, c: null };
      break;
    }
  }
  return { keys: out, total: out.length, next_cursor: next ? encode(next) : null };
}

export const list = defineHandler({
  summary: 'List the account’s keys of every kind',
  description:
    'Every key-like resource (SSH, GPG, OpenSSL, the key kinds, certificates, code-signing keys…) with its public facts only; `type` filters, `cursor` continues.',
  responses: { 200: KeyCatalogPage },
  errors: ['bad_request'],
  query: KeyCatalogQuery,
  async handler({ ctx, query }) {
    return ok(await keyCatalog(ctx, query));
  },
});

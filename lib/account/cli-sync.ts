import type { CallContext } from '../auth/principal.js';
import { recordAudit } from '../audit/audit.js';
import { idPrefixAt, LOOKBACK_MS } from '../audit/chain.js';
import { openJson } from '../crypto/envelope.js';
import { toWebhook } from '../events/webhooks.js';
import { badRequest } from '../core/errors.js';
import { accountSettings } from '../settings/settings.js';
import { keys, tenantPk } from '../store/keys.js';
import { queryFirst, queryPages, readPage, type QuerySpec } from '../store/pagination.js';
import { toRecord } from '../resources/store.js';
import { readAt } from './store.js';

/**
 * GET /api/v1/cli/sync: the account's metadata for the local client, and a sync token for
 * the next, incremental call.
 *
 * - Full (no `since`): every generic secret, versioned resource, API key and webhook as
 *   metadata, in pages (`cursor`); values only with `include_values=true`, and then only the
 *   generic secrets' data (audited as `cli.sync`).
 * - Incremental (`since=<sync_token>`): what changed since the token, read from the audit
 *   trail (the account's change log): the current metadata of every resource touched, and
 *   the ids of those deleted. The window starts LOOKBACK_MS before the token's time, so a
 *   change still in flight when the token was made is not missed (it may come twice:
 *   applying an item is idempotent).
 *
 * The token is the snapshot's start time and the account id, so a token of another account
 * is refused (400). A snapshot is consistent as of that time: every change after it comes
 * with the next incremental call.
 */
const GROUPS = [keys.secretPrefix, 'R#', keys.apiKeyPrefix, keys.webhookPrefix] as const;
const MAX_CHANGES = 2_000;

interface Token {
  readonly v: 1;
  readonly t: string;
  readonly at: number;
}
interface Cursor {
  readonly token: string;
  readonly g: number;
  readonly sk?: string;
}

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v), 'utf8').toString('base64url');
function unb64<T>(s: string, field: string, check: (v: T) => boolean): T {
  try {
    const v = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as T;
    if (v && check(v)) return v;
  } catch {
    // fall through
  }
  throw badRequest(`invalid ${field}`, [{ path: `query.${field}`, message: `not a ${field} returned by this endpoint` }], `invalid_${field}`);
}

const SECRET_FIELDS = [
  'id',
  'name',
  'description',
  'tags',
  'container_id',
  'version',
  'created_at',
  'updated_at',
  'created_by',
  'updated_by',
] as const;
const API_KEY_FIELDS = ['id', 'name', 'prefix', 'scopes', 'status', 'created_at', 'created_by', 'expires_at', 'revoked_at'] as const;
const pick = (item: Record<string, unknown>, fields: readonly string[]) => Object.fromEntries(fields.map((f) => [f, item[f] ?? null]));

async function present(tid: string, item: Record<string, unknown>, withValues: boolean): Promise<Record<string, unknown> | undefined> {
  const sk = item.sk as string;
  if (sk.startsWith(keys.secretPrefix)) {
    const meta = (item.meta ?? {}) as Record<string, unknown>;
    const out: Record<string, unknown> = {
      kind: 'secret',
      type: 'secret',
      ...pick({ ...item, description: meta.description, tags: meta.tags }, SECRET_FIELDS),
    };
    if (withValues && item.value) {
      out.data = await openJson({ tenantId: tid, type: 'secret', id: item.id as string, version: item.version as number }, item.value as Uint8Array);
    }
    return out;
  }
  if (sk.startsWith('R#')) return { kind: 'resource', ...toRecord(item) };
  if (sk.startsWith(keys.apiKeyPrefix)) return { kind: 'api_key', type: 'api_key', ...pick(item, API_KEY_FIELDS) };
  if (sk.startsWith(keys.webhookPrefix)) return { kind: 'webhook', type: 'webhook', ...toWebhook(item) };
  return undefined;
}

const account = (ctx: CallContext) => {
  const t = ctx.principal.tenant;
  return { id: t.id, name: t.name, status: t.status, quota: t.quota, settings: accountSettings(t) };
};

export interface SyncQuery {
  readonly since?: string;
  readonly cursor?: string;
  readonly include_values?: 'true' | 'false';
  readonly limit: number;
}

export async function cliSync(ctx: CallContext, q: SyncQuery) {
  const tid = ctx.principal.tenantId;
  const withValues = q.include_values === 'true';
  if (q.since && q.cursor)
    throw badRequest('since and cursor cannot be combined', [{ path: 'query.cursor', message: 'continue a full snapshot without since' }]);
  const result = q.since ? await incremental(ctx, q.since, withValues) : await full(ctx, q, withValues);
  if (withValues) {
    await recordAudit(ctx, tid, {
      action: 'cli.sync',
      resource: { type: 'account', id: tid },
      detail: { values: true, items: result.items.length, full: result.full },
    });
  }
  return result;
}

async function full(ctx: CallContext, q: SyncQuery, withValues: boolean) {
  const tid = ctx.principal.tenantId;
  const cursor = q.cursor
    ? unb64<Cursor>(
        q.cursor,
        'cursor',
        (c) =>
          typeof c.token === 'string' && Number.isInteger(c.g) && c.g >= 0 && c.g < GROUPS.length && (c.sk === undefined || typeof c.sk === 'string'),
      )
    : undefined;
  const token = cursor ? cursor.token : b64({ v: 1, t: tid, at: Date.now() } satisfies Token);
  if (cursor) checkToken(token, tid);
  const items: Record<string, unknown>[] = [];
  let g = cursor?.g ?? 0;
  let after = cursor?.sk;
  let next: Cursor | undefined;
  while (g < GROUPS.length) {
    const prefix = GROUPS[g]!;
    const pk = tenantPk(tid);
    const got = await readPage({ pk, sk: { prefix } }, q.limit - items.length, { start: after ? { pk, sk: after } : undefined });
    for (const item of got.items) {
      const shown = await present(tid, item, withValues);
      if (shown) items.push(shown);
    }
    if (got.more) after = got.items.at(-1)!.sk as string;
    else {
      g += 1;
      after = undefined;
    }
    if (items.length >= q.limit) {
      if (g < GROUPS.length) next = { token, g, ...(after ? { sk: after } : {}) };
      break;
    }
  }
  return {
    full: true,
    sync_token: token,
    account: account(ctx),
    items,
    deleted: [] as { type: string; id: string }[],
    total: items.length,
    next_cursor: next ? b64(next) : null,
  };
}

function checkToken(token: string, tid: string): Token {
  const t = unb64<Token>(token, 'sync_token', (v) => v.v === 1 && typeof v.t === 'string' && typeof v.at === 'number');
  if (t.t !== tid)
    throw badRequest(
      'this sync token belongs to another account',
      [{ path: 'query.since', message: 'not a sync token of this account' }],
      'invalid_sync_token',
    );
  return t;
}

async function findById(tid: string, type: string, id: string): Promise<Record<string, unknown> | undefined> {
  const direct = type === 'api_key' ? keys.apiKey(tid, id) : type === 'webhook' ? keys.webhook(tid, id) : undefined;
  let key = direct;
  if (!key) {
    const index = keys.resourceIndex(tid, id);
    const hit = await queryFirst({ pk: index.gsi1pk, index: 'gsi1', sk: { equals: index.gsi1sk } });
    if (!hit) return undefined;
    key = { pk: hit.pk as string, sk: hit.sk as string };
  }
  return readAt(key);
}

/** Resource types of the audit trail that are not synced resources. */
const NOT_SYNCED = new Set(['route', 'audit_log', 'account', 'tenant', 'settings']);

async function incremental(ctx: CallContext, since: string, withValues: boolean) {
  const tid = ctx.principal.tenantId;
  const started = Date.now();
  const token = checkToken(since, tid);
  const touched = new Map<string, { type: string; id: string }>();
  let accountChanged = false;
  let seen = 0;
  let unfinished = false;
  const spec: QuerySpec = {
    pk: tenantPk(tid),
    sk: { between: [`${keys.auditPrefix}${idPrefixAt(token.at - LOOKBACK_MS)}`, `${keys.auditPrefix}~`] },
    filter: { expression: '#o = :success', names: { '#o': 'outcome' }, values: { ':success': 'success' } },
    projection: ['resource'],
  };
  for await (const page of queryPages(spec)) {
    for (const item of page.items) {
      const r = item.resource as { type: string; id: string } | undefined;
      if (!r) continue;
      if (r.type === 'tenant' || r.type === 'settings') accountChanged = true;
      else if (!NOT_SYNCED.has(r.type)) touched.set(`${r.type}|${r.id}`, { type: r.type, id: r.id });
    }
    seen += page.scanned;
    unfinished = page.more;
    if (!(touched.size <= MAX_CHANGES && seen < 50 * MAX_CHANGES)) break;
  }
  if (unfinished) {
    return { full: false, full_resync_required: true, sync_token: null, items: [], deleted: [], total: 0, next_cursor: null };
  }
  const items: Record<string, unknown>[] = [];
  const deleted: { type: string; id: string }[] = [];
  for (const r of touched.values()) {
    const item = await findById(tid, r.type, r.id);
    const shown = item ? await present(tid, item, withValues) : undefined;
    if (shown) items.push(shown);
    else deleted.push(r);
  }
  return {
    full: false,
    sync_token: b64({ v: 1, t: tid, at: started } satisfies Token),
    ...(accountChanged ? { account: account(ctx) } : {}),
    items,
    deleted,
    total: items.length,
    next_cursor: null,
  };
}

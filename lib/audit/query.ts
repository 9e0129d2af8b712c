import { badRequest } from '../core/errors.js';
import { nowIso } from '../ids.js';
import { keys, tenantPk } from '../store/keys.js';
import { getMany, queryPages, readPage, type QuerySpec } from '../store/pagination.js';
import { mergeShards } from '../store/shards.js';
import { digestMessage, GENESIS, presentEntry, type AuditEntry, type ChainLink } from './canonical.js';
import { auditSkRange, chainHead, idPrefixAt, idTime, LOOKBACK_MS, sealTenant } from './chain.js';
import { auditKey } from './signing-key.js';
import { verifyChain } from './verify.js';

export interface AuditFilter {
  /** An actor's credential id or user e-mail. */
  readonly actor?: string;
  readonly actor_type?: string;
  /** Exact action, or a prefix ending with `*` (e.g. `secret.*`). */
  readonly action?: string;
  readonly resource_type?: string;
  readonly resource_id?: string;
  readonly outcome?: string;
  /** Time range in milliseconds, inclusive. */
  readonly from?: number;
  readonly to?: number;
  /** Operator view only. */
  readonly tenant_id?: string;
}

type ListedEntry = AuditEntry & { chain: Pick<ChainLink, 'seq' | 'hash'> | null };

const listed = (item: Record<string, unknown>): ListedEntry => {
  const chain = item.chain as ChainLink | undefined;
  return { ...presentEntry(item), chain: chain ? { seq: chain.seq, hash: chain.hash } : null };
};

/** Items scanned per request at most: a selective filter over a long history pages on. */
const SCAN_BUDGET = 5000;

function filterExpression(f: AuditFilter) {
  const parts: string[] = [];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  if (f.actor) {
    Object.assign(names, { '#actor': 'actor', '#aid': 'id', '#auser': 'user' });
    values[':actor'] = f.actor;
    parts.push('(#actor.#aid = :actor OR #actor.#auser = :actor)');
  }
  if (f.actor_type) {
    Object.assign(names, { '#actor': 'actor', '#atype': 'type' });
    values[':atype'] = f.actor_type;
    parts.push('#actor.#atype = :atype');
  }
  if (f.action) {
    names['#action'] = 'action';
    if (f.action.endsWith('*')) {
      values[':action'] = f.action.slice(0, -1);
      parts.push('begins_with(#action, :action)');
    } else {
      values[':action'] = f.action;
      parts.push('#action = :action');
    }
  }
  if (f.resource_type) {
    Object.assign(names, { '#res': 'resource', '#rtype': 'type' });
    values[':rtype'] = f.resource_type;
    parts.push('#res.#rtype = :rtype');
  }
  if (f.resource_id) {
    Object.assign(names, { '#res': 'resource', '#rid': 'id' });
    values[':rid'] = f.resource_id;
    parts.push('#res.#rid = :rid');
  }
  if (f.outcome) {
    names['#outcome'] = 'outcome';
    values[':outcome'] = f.outcome;
    parts.push('#outcome = :outcome');
  }
  return parts.length ? { FilterExpression: parts.join(' AND '), ExpressionAttributeNames: names, values } : { values };
}

/** The same filter in memory (the operator view reads keys from the index, then items). */
function matches(item: Record<string, unknown>, f: AuditFilter): boolean {
  const actor = (item.actor ?? {}) as Record<string, unknown>;
  const resource = (item.resource ?? {}) as Record<string, unknown>;
  const t = idTime(item.id as string);
  if (f.from !== undefined && t < f.from) return false;
  if (f.to !== undefined && t > f.to) return false;
  if (f.actor && actor.id !== f.actor && actor.user !== f.actor) return false;
  if (f.actor_type && actor.type !== f.actor_type) return false;
  if (f.action && (f.action.endsWith('*') ? !(item.action as string).startsWith(f.action.slice(0, -1)) : item.action !== f.action)) return false;
  if (f.resource_type && resource.type !== f.resource_type) return false;
  if (f.resource_id && resource.id !== f.resource_id) return false;
  if (f.outcome && (item.outcome ?? 'success') !== f.outcome) return false;
  return true;
}

const encode = (v: Record<string, string>) => Buffer.from(JSON.stringify(v), 'utf8').toString('base64url');
function decode(cursor: string, check: (v: Record<string, unknown>) => boolean): Record<string, string> {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Record<string, unknown>;
    if (v && typeof v === 'object' && Object.values(v).every((x) => typeof x === 'string') && check(v)) return v as Record<string, string>;
  } catch {
    // fall through
  }
  throw badRequest('invalid cursor', [{ path: 'query.cursor', message: 'not a cursor returned by this list' }]);
}

/** An account's audit entries, newest first, filtered, with a cursor. */
export async function listAudit(
  tenantId: string,
  f: AuditFilter,
  page: { limit: number; cursor?: string },
): Promise<{ entries: ListedEntry[]; nextCursor?: string }> {
  const { lo, hi } = auditSkRange(f.from, f.to);
  let start: Record<string, unknown> | undefined;
  if (page.cursor) {
    const c = decode(page.cursor, (v) => typeof v.sk === 'string' && (v.sk as string).startsWith(keys.auditPrefix) && Object.keys(v).length === 1);
    start = { pk: tenantPk(tenantId), sk: c.sk };
  }
  const fx = filterExpression(f);
  const filtered = fx.FilterExpression !== undefined;
  const entries: ListedEntry[] = [];
  let scanned = 0;
  let lastSk: string | undefined;
  let dropped = false;
  let more = true;
  const spec: QuerySpec = {
    pk: tenantPk(tenantId),
    sk: { between: [lo, hi] },
    ...(filtered ? { filter: { expression: fx.FilterExpression!, names: fx.ExpressionAttributeNames, values: fx.values } } : {}),
    newestFirst: true,
  };
  const want = () => (entries.length < page.limit && scanned < SCAN_BUDGET ? (filtered ? 500 : page.limit - entries.length) : 0);
  for await (const out of queryPages(spec, { start, want })) {
    scanned += out.scanned;
    for (const item of out.items) {
      if (entries.length >= page.limit) {
        dropped = true;
        break;
      }
      entries.push(listed(item));
      lastSk = item.sk as string;
    }
    start = out.last;
    more = out.more;
  }
  // Full page: continue after the last entry returned. Budget spent: after the last item scanned.
  let nextSk: string | undefined;
  if (entries.length >= page.limit) nextSk = more || dropped ? lastSk : undefined;
  else if (more) nextSk = start!.sk as string;
  return { entries, ...(nextSk ? { nextCursor: encode({ sk: nextSk }) } : {}) };
}

/** Every account's entries for the platform operator, newest first (the global AUDIT listing's shards, merged). */
export async function adminListAudit(
  f: AuditFilter,
  page: { limit: number; cursor?: string },
): Promise<{ entries: ListedEntry[]; nextCursor?: string }> {
  if (f.tenant_id) return listAudit(f.tenant_id, f, page);
  const after = page.cursor ? decode(page.cursor, (v) => typeof v.gsi1sk === 'string' && Object.keys(v).length === 1).gsi1sk : undefined;
  const lo = f.from !== undefined ? idPrefixAt(f.from) : '0';
  const hi = f.to !== undefined ? idPrefixAt(f.to + 1) : '~';
  const entries: ListedEntry[] = [];
  let scanned = 0;
  let last: string | undefined;
  let stopped = false; // the page filled up (or the scan budget ran out) before the listing did
  let chunk: Record<string, unknown>[] = [];
  const drain = async () => {
    const items = await batchGet(chunk.map((r) => ({ pk: r.pk as string, sk: r.sk as string })));
    for (const ref of chunk) {
      if (entries.length >= page.limit) break;
      const item = items.get(`${ref.pk as string}|${ref.sk as string}`);
      last = ref.platsk as string;
      if (item && matches(item, f)) entries.push(listed(item));
    }
    chunk = [];
    return entries.length >= page.limit || scanned >= SCAN_BUDGET;
  };
  for await (const ref of mergeShards(
    keys.auditIndexPks,
    { sk: { between: [lo, hi] }, newestFirst: true },
    { pageSize: 100, ...(after ? { after } : {}) },
  )) {
    scanned++;
    chunk.push(ref);
    if (chunk.length >= 100 || scanned >= SCAN_BUDGET) {
      stopped = await drain();
      if (stopped) break;
    }
  }
  if (!stopped && chunk.length > 0) stopped = await drain();
  return { entries, ...(last && stopped ? { nextCursor: encode({ gsi1sk: last }) } : {}) };
}

async function batchGet(refs: { pk: string; sk: string }[]): Promise<Map<string, Record<string, unknown>>> {
  return new Map((await getMany(refs)).map((item) => [`${item.pk as string}|${item.sk as string}`, item]));
}

async function queryRange(
  tenantId: string,
  lo: string,
  hi: string,
  after: string | undefined,
  budgetItems: number,
): Promise<{ items: Record<string, unknown>[]; more: boolean }> {
  return readPage({ pk: tenantPk(tenantId), sk: { between: [lo, hi] } }, budgetItems, {
    start: after ? { pk: tenantPk(tenantId), sk: after } : undefined,
  });
}

/** Entries per export response at most; the rest follows with the returned cursor. */
const EXPORT_MAX_ENTRIES = 5_000;

interface AuditExport {
  readonly entries: Record<string, unknown>[];
  readonly digest: Record<string, unknown>;
  readonly signature: string;
  readonly nextCursor?: string;
}

/**
 * An export of a time range in chain order, sealed first, with a signed digest. The range
 * is read in pages of 1000 and cut at EXPORT_MAX_ENTRIES (a cursor continues it). Entries
 * just outside the range whose seq falls inside it (late commits) are included so the
 * exported chain has no gap; entries not yet sealed (in flight) are left for the next export.
 */
export async function exportAudit(tenantId: string, range: { from: number; to: number; cursor?: string }): Promise<AuditExport> {
  await sealTenant(tenantId);
  const { lo, hi } = auditSkRange(range.from, range.to);
  const after = range.cursor
    ? decode(range.cursor, (v) => typeof v.sk === 'string' && (v.sk as string).startsWith(keys.auditPrefix) && Object.keys(v).length === 1).sk
    : undefined;
  const page = await queryRange(tenantId, lo, hi, after, EXPORT_MAX_ENTRIES);
  const sealed = page.items.filter((i) => i.chain !== undefined);
  const unsealedSkipped = page.items.length - sealed.length;
  const bySeq = new Map<number, Record<string, unknown>>();
  for (const i of sealed) bySeq.set((i.chain as ChainLink).seq, i);
  if (bySeq.size > 0) {
    const seqs = [...bySeq.keys()];
    const [min, max] = [Math.min(...seqs), Math.max(...seqs)];
    if (max - min + 1 > bySeq.size) {
      // late commits chained inside this range but stored (by id) just outside it
      const firstId = page.items[0]!.id as string;
      const lastId = page.items.at(-1)!.id as string;
      const windows = [
        [`${keys.auditPrefix}${idPrefixAt(idTime(firstId) - LOOKBACK_MS)}`, `${keys.auditPrefix}${firstId}`],
        [`${keys.auditPrefix}${lastId}`, `${keys.auditPrefix}${idPrefixAt(idTime(lastId) + LOOKBACK_MS + 1)}`],
      ] as const;
      for (const [wlo, whi] of windows) {
        for (const i of (await queryRange(tenantId, wlo, whi, undefined, 5000)).items) {
          const link = i.chain as ChainLink | undefined;
          if (link && link.seq > min && link.seq < max && !bySeq.has(link.seq)) bySeq.set(link.seq, i);
        }
      }
    }
  }
  const ordered = [...bySeq.entries()].sort(([a], [b]) => a - b).map(([, i]) => i);
  const entries = ordered.map((i) => {
    const c = i.chain as ChainLink;
    return { ...presentEntry(i), chain: { seq: c.seq, prev: c.prev, hash: c.hash } } as Record<string, unknown>;
  });
  const first = entries[0]?.chain as ChainLink | undefined;
  const last = entries.at(-1)?.chain as ChainLink | undefined;
  const problems = verifyChain(entries, first?.prev ?? GENESIS, first?.seq ?? null);
  const [head, key] = await Promise.all([chainHead(tenantId), auditKey(tenantId)]);
  const nextCursor = page.more && page.items.length ? encode({ sk: page.items.at(-1)!.sk as string }) : undefined;
  const digest = {
    version: 1,
    tenant_id: tenantId,
    from: new Date(range.from).toISOString(),
    to: new Date(range.to).toISOString(),
    generated_at: nowIso(),
    count: entries.length,
    first_seq: first?.seq ?? null,
    last_seq: last?.seq ?? null,
    prev_hash: first?.prev ?? GENESIS,
    last_hash: last?.hash ?? null,
    unsealed_skipped: unsealedSkipped,
    next_cursor: nextCursor ?? null,
    verified: problems.length === 0,
    problems,
    head: head ? { seq: head.seq, hash: head.hash, signature: head.signature } : null,
    public_key: key.publicJwk,
  };
  return { entries, digest, signature: key.sign(digestMessage(digest)), ...(nextCursor ? { nextCursor } : {}) };
}

const CSV_COLUMNS = [
  'id',
  'time',
  'actor_type',
  'actor_id',
  'actor_user',
  'action',
  'resource_type',
  'resource_id',
  'resource_name',
  'outcome',
  'request_id',
  'source_ip',
  'user_agent',
  'detail',
  'chain_seq',
  'chain_prev',
  'chain_hash',
] as const;

const csvCell = (v: unknown): string => {
  if (v === null || v === undefined) return '';
  let s = typeof v === 'string' ? v : JSON.stringify(v);
  // no formula injection in spreadsheets
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

export function exportToCsv(entries: Record<string, unknown>[]): string {
  const rows = entries.map((e) => {
    const a = (e.actor ?? {}) as Record<string, unknown>;
    const r = (e.resource ?? {}) as Record<string, unknown>;
    const c = (e.chain ?? {}) as Record<string, unknown>;
    const row: Record<(typeof CSV_COLUMNS)[number], unknown> = {
      id: e.id,
      time: e.time,
      actor_type: a.type,
      actor_id: a.id,
      actor_user: a.user,
      action: e.action,
      resource_type: r.type,
      resource_id: r.id,
      resource_name: r.name,
      outcome: e.outcome,
      request_id: e.request_id,
      source_ip: e.source_ip,
      user_agent: e.user_agent,
      detail: e.detail,
      chain_seq: c.seq,
      chain_prev: c.prev,
      chain_hash: c.hash,
    };
    return CSV_COLUMNS.map((k) => csvCell(row[k])).join(',');
  });
  return [CSV_COLUMNS.join(','), ...rows].join('\r\n') + '\r\n';
}

export function exportToJsonLines(x: AuditExport): string {
  return [...x.entries, { digest: x.digest, signature: x.signature }].map((l) => JSON.stringify(l)).join('\n') + '\n';
}

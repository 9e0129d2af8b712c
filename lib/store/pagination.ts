import { BatchGetCommand, type BatchGetCommandOutput, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { badRequest } from '../core/errors.js';
import { db, tableName } from './client.js';
import { TABLE_KEYS } from './keys.js';

/**
 * THE query of the single table, and the one loop that follows `LastEvaluatedKey`
 * (docs/architecture.md, "Data access"). Every read of several items goes through
 * `queryPages`: pages of a key prefix or range, newest first or not, projected, filtered,
 * or counted. `queryPage` (offset and cursor paging of lists), `queryAll` (bounded sets)
 * and `queryCount` are its three shapes; nothing else builds a QueryCommand.
 */
export type Item = Record<string, unknown>;

/** The sort-key condition: a prefix, an inclusive range, an exact value, or everything after a value. */
type SkCondition =
  | { readonly prefix: string }
  | { readonly between: readonly [string, string] }
  | { readonly equals: string }
  | { readonly after: string }
  | { readonly before: string };

export interface QuerySpec {
  /** The partition key value (of the table, or of gsi1 with `index`). */
  readonly pk: string;
  readonly sk?: SkCondition;
  /** Query gsi1 or the platform listings' index `plat` (keys only; eventually consistent) instead of the table (consistent reads). */
  readonly index?: 'gsi1' | 'plat';
  /** Attributes to read, `a.b` for a nested one (the keys are always included). */
  readonly projection?: readonly string[];
  readonly filter?: { readonly expression: string; readonly values?: Item; readonly names?: Readonly<Record<string, string>> };
  /** Descending sort-key order (newest first for UUIDv7-keyed items). */
  readonly newestFirst?: boolean;
  /** Count matching items instead of reading them. */
  readonly count?: boolean;
}

interface QueryOptions {
  /** Continue after this key (a cursor). */
  readonly start?: Item;
  /** How many more items the caller still wants (the next call's Limit); undefined: no limit. */
  readonly want?: () => number | undefined;
}

function command(spec: QuerySpec, start: Item | undefined, limit: number | undefined): QueryCommand {
  const [pkName, skName] = spec.index ? [TABLE_KEYS[spec.index].pk, TABLE_KEYS[spec.index].sk] : ['pk', 'sk'];
  const names: Record<string, string> = { '#pk': pkName, ...(spec.filter?.names ?? {}) };
  const values: Item = { ':pk': spec.pk, ...(spec.filter?.values ?? {}) };
  let key = '#pk = :pk';
  const sk = spec.sk;
  if (sk) {
    names['#sk'] = skName;
    if ('prefix' in sk) [key, values[':sk']] = [`${key} AND begins_with(#sk, :sk)`, sk.prefix];
    else if ('equals' in sk) [key, values[':sk']] = [`${key} AND #sk = :sk`, sk.equals];
    else if ('after' in sk) [key, values[':sk']] = [`${key} AND #sk > :sk`, sk.after];
    else if ('before' in sk) [key, values[':sk']] = [`${key} AND #sk < :sk`, sk.before];
    else [key, values[':lo'], values[':hi']] = [`${key} AND #sk BETWEEN :lo AND :hi`, sk.between[0], sk.between[1]];
  }
  // a path `meta.description` projects one nested attribute
  const projection = spec.projection?.map((f, i) =>
    f
      .split('.')
      .map((part, j) => {
        names[`#p${i}_${j}`] = part;
        return `#p${i}_${j}`;
      })
      .join('.'),
  );
  return new QueryCommand({
    TableName: tableName(),
    ...(spec.index ? { IndexName: spec.index } : { ConsistentRead: true }),
    KeyConditionExpression: key,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
    ...(projection ? { ProjectionExpression: [spec.index ? `pk, sk, ${pkName}, ${skName}` : 'pk, sk', ...projection].join(', ') } : {}),
    ...(spec.filter ? { FilterExpression: spec.filter.expression } : {}),
    ...(spec.newestFirst ? { ScanIndexForward: false } : {}),
    ...(spec.count ? { Select: 'COUNT' as const } : {}),
    ...(limit !== undefined ? { Limit: Math.max(1, Math.min(limit, 1000)) } : {}),
    ExclusiveStartKey: start,
  });
}

/** Pages of a query, following LastEvaluatedKey until the end or until the caller wants no more. */
export async function* queryPages(
  spec: QuerySpec,
  opts: QueryOptions = {},
): AsyncGenerator<{ items: Item[]; count: number; scanned: number; more: boolean; last: Item | undefined }> {
  let start = opts.start;
  for (;;) {
    const want = opts.want?.();
    if (want !== undefined && want <= 0) return;
    const out = await db().send(command(spec, start, want));
    start = out.LastEvaluatedKey;
    yield { items: out.Items ?? [], count: out.Count ?? 0, scanned: out.ScannedCount ?? 0, more: start !== undefined, last: start };
    if (!start) return;
  }
}

/** Every matching item, up to `max`. For bounded sets: versions, revocations, webhooks, keys, members. */
export async function queryAll(spec: QuerySpec, max = Number.POSITIVE_INFINITY): Promise<Item[]> {
  const items: Item[] = [];
  for await (const page of queryPages(spec, { want: () => (Number.isFinite(max) ? max - items.length : undefined) })) items.push(...page.items);
  return items.slice(0, max);
}

/** The first matching item (e.g. the newest with `newestFirst`, or the one gsi1 entry of an id). */
export async function queryFirst(spec: QuerySpec): Promise<Item | undefined> {
  return (await queryAll(spec, 1))[0];
}

/** How many items match (the filter applied). */
export async function queryCount(spec: QuerySpec): Promise<number> {
  let n = 0;
  for await (const page of queryPages({ ...spec, count: true })) n += page.count;
  return n;
}

interface PageRequest {
  readonly pk: string;
  /** Items whose sk starts with this prefix. */
  readonly prefix: string;
  readonly limit: number;
  readonly offset?: number;
  readonly cursor?: string;
  readonly projection?: readonly string[];
  /** Descending sk order (newest first for UUIDv7-keyed items). */
  readonly newestFirst?: boolean;
}

interface Page<T> {
  readonly items: T[];
  /** Opaque cursor for the next page, absent on the last page. */
  readonly nextCursor?: string;
}

/** The opaque cursor of every sk-ordered list: the last sk returned, validated against the list's prefix on the way back. */
export const encodeCursor = (sk: string) => Buffer.from(JSON.stringify({ sk }), 'utf8').toString('base64url');

export function decodeCursor(cursor: string, prefix: string): string {
  try {
    const { sk } = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { sk?: unknown };
    if (typeof sk === 'string' && sk.startsWith(prefix)) return sk;
  } catch {
    // fall through
  }
  throw badRequest('invalid cursor', [{ path: 'query.cursor', message: 'not a cursor returned by this list' }]);
}

/**
 * One page of a partition's items under a key prefix. Offset pagination reads and
 * discards (its cost grows with the offset); the cursor continues after the last item
 * returned and costs only the page. The tenant is in `pk`, never in the cursor.
 */
export async function queryPage<T>(req: PageRequest): Promise<Page<T>> {
  const start = req.cursor ? { pk: req.pk, sk: decodeCursor(req.cursor, req.prefix) } : undefined;
  const { items, more } = await readPage(
    { pk: req.pk, sk: { prefix: req.prefix }, projection: req.projection, newestFirst: req.newestFirst },
    req.limit,
    { start, skip: req.offset },
  );
  // Each Query asks for exactly what is still needed, so nothing past the last item is
  // read: more items may follow it exactly when DynamoDB says the query did not finish.
  const last = items.at(-1);
  return { items: items as T[], ...(last && more ? { nextCursor: encodeCursor(last.sk as string) } : {}) };
}

/** Up to `limit` items after `start`, the first `skip` read and dropped; `more` when the query did not finish. */
export async function readPage(
  spec: QuerySpec,
  limit: number,
  opts: { start?: Item; skip?: number } = {},
): Promise<{ items: Item[]; more: boolean }> {
  let skip = opts.skip ?? 0;
  const items: Item[] = [];
  let more = false;
  for await (const page of queryPages(spec, { start: opts.start, want: () => limit - items.length + skip })) {
    const dropped = Math.min(skip, page.items.length);
    skip -= dropped;
    items.push(...page.items.slice(dropped, dropped + (limit - items.length)));
    more = page.more;
  }
  return { items, more };
}

/**
 * Many items by key, consistently, in BatchGetItem calls of 100 keys, retrying unprocessed
 * keys (at most 5 rounds, then it fails). Returns the items found (their keys and the
 * `projection` attributes when given), in no particular order.
 */
export async function getMany(keyList: readonly { readonly pk: string; readonly sk: string }[], projection?: readonly string[]): Promise<Item[]> {
  // the keys are always read: a caller tells the items apart by them
  const names = projection ? Object.fromEntries(['pk', 'sk', ...projection].map((f, i) => [`#p${i}`, f])) : undefined;
  const project = names ? { ProjectionExpression: Object.keys(names).join(', '), ExpressionAttributeNames: names } : {};
  const found: Item[] = [];
  for (let i = 0; i < keyList.length; i += 100) {
    let request: Item[] | undefined = keyList.slice(i, i + 100).map((k) => ({ pk: k.pk, sk: k.sk }));
    for (let round = 0; request && request.length > 0; round++) {
      if (round === 5) throw new Error('BatchGetItem left keys unprocessed');
      const out: BatchGetCommandOutput = await db().send(
        new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: request, ConsistentRead: true, ...project } } }),
      );
      found.push(...(out.Responses?.[tableName()] ?? []));
      request = out.UnprocessedKeys?.[tableName()]?.Keys;
    }
  }
  return found;
}

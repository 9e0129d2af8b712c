import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { badRequest } from '../http/errors.js';
import { db, tableName } from './client.js';

export interface PageRequest {
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

export interface Page<T> {
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
  const names: Record<string, string> = {};
  const projection = req.projection?.map((f, i) => {
    names[`#p${i}`] = f;
    return `#p${i}`;
  });
  let start: Record<string, unknown> | undefined = req.cursor ? { pk: req.pk, sk: decodeCursor(req.cursor, req.prefix) } : undefined;
  let skip = req.offset ?? 0;
  const items: Record<string, unknown>[] = [];
  let more = true;
  while (items.length < req.limit && more) {
    const want = req.limit - items.length + skip;
    const out = await db().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': req.pk, ':prefix': req.prefix },
        ...(projection ? { ProjectionExpression: ['sk', ...projection].join(', '), ExpressionAttributeNames: names } : {}),
        ExclusiveStartKey: start,
        Limit: Math.min(want, 1000),
        ConsistentRead: true,
        ...(req.newestFirst ? { ScanIndexForward: false } : {}),
      }),
    );
    const got = out.Items ?? [];
    const dropped = Math.min(skip, got.length);
    skip -= dropped;
    items.push(...got.slice(dropped, dropped + (req.limit - items.length)));
    start = out.LastEvaluatedKey;
    more = start !== undefined;
  }
  // Each Query asks for exactly what is still needed, so nothing past the last item is
  // read: more items may follow it exactly when DynamoDB says the query did not finish.
  const last = items.at(-1);
  return { items: items as T[], ...(last && more ? { nextCursor: encodeCursor(last.sk as string) } : {}) };
}

/**
 * Every item of a partition under a key prefix (consistent reads, following
 * LastEvaluatedKey), up to `max`. For bounded sets: versions, revocations, webhooks, keys.
 */
export async function queryAll(pk: string, prefix: string, opts: { projection?: string; names?: Record<string, string>; max?: number; newestFirst?: boolean } = {}): Promise<Record<string, unknown>[]> {
  const max = opts.max ?? Number.POSITIVE_INFINITY;
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        ExpressionAttributeValues: { ':pk': pk, ':p': prefix },
        ...(opts.projection ? { ProjectionExpression: opts.projection } : {}),
        ...(opts.names ? { ExpressionAttributeNames: opts.names } : {}),
        ...(opts.newestFirst ? { ScanIndexForward: false } : {}),
        ...(Number.isFinite(max) ? { Limit: Math.min(1000, max - items.length) } : {}),
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start && items.length < max);
  return items;
}

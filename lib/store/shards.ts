import { type Item, type QuerySpec, queryPages } from './pagination.js';

/**
 * The one reader of a gsi1 listing spread over shard partition keys (keys.ts GSI_SHARDS:
 * `AUDIT#<n>`, `TENANTS#<n>`, `LEASES#<n>`): the same query on every shard, merged into one
 * stream in gsi1 sort-key order (descending with `newestFirst`). Sort keys are unique across
 * shards (ids, or a time followed by ids), so the merged order is total and a cursor is just
 * the last sort key read: pass it as `after` and every shard resumes past it.
 *
 * Each shard is read a page at a time (`pageSize`), the first pages of all shards in
 * parallel, a next page only when the merge has used up the one before.
 */
export async function* mergeShards(
  pks: readonly string[],
  spec: Omit<QuerySpec, 'pk' | 'index'>,
  opts: { pageSize?: number; after?: string } = {},
): AsyncGenerator<Item> {
  const pageSize = opts.pageSize ?? 100;
  const desc = spec.newestFirst === true;
  const sk = resume(spec.sk, opts.after, desc);
  const streams = pks.map((pk) => queryPages({ ...spec, ...(sk ? { sk } : {}), pk, index: 'gsi1' }, { want: () => pageSize }));
  const buffers: Item[][] = pks.map(() => []);
  const done = pks.map(() => false);
  const fill = async (i: number) => {
    while (buffers[i]!.length === 0 && !done[i]) {
      const next = await streams[i]!.next();
      if (next.done) done[i] = true;
      else buffers[i]!.push(...next.value.items.filter((item) => item.gsi1sk !== opts.after));
    }
  };
  await Promise.all(pks.map((_, i) => fill(i)));
  for (;;) {
    let best = -1;
    for (let i = 0; i < buffers.length; i++) {
      const head = buffers[i]![0];
      if (!head) continue;
      const b = best < 0 ? undefined : (buffers[best]![0]!.gsi1sk as string);
      if (b === undefined || (desc ? (head.gsi1sk as string) > b : (head.gsi1sk as string) < b)) best = i;
    }
    if (best < 0) return;
    yield buffers[best]!.shift()!;
    await fill(best);
  }
}

/** The sort-key condition narrowed to what lies past `after` (inclusive: the item equal to `after` is dropped by the merge). */
function resume(sk: QuerySpec['sk'], after: string | undefined, desc: boolean): QuerySpec['sk'] {
  if (after === undefined) return sk;
  if (!sk) return desc ? { before: after } : { after };
  if ('between' in sk) return { between: desc ? [sk.between[0], after] : [after, sk.between[1]] };
  throw new Error('mergeShards: a cursor goes with no sort-key condition or a range (between)');
}

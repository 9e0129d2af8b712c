import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.js';
import { keys } from './keys.js';
import { type Item, type QuerySpec, queryPages } from './pagination.js';

/**
 * The one reader of a platform listing spread over shard partition keys (keys.ts GSI_SHARDS:
 * `AUDIT#<n>`, `TENANTS#<n>`, `LEASES#<n>`, `TOKENKEYS#<n>`; index `plat`): the same query on
 * every shard, merged into one stream in `platsk` order (descending with `newestFirst`). Sort keys are unique across
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
  const streams = pks.map((pk) => queryPages({ ...spec, ...(sk ? { sk } : {}), pk, index: 'plat' }, { want: () => pageSize }));
  const buffers: Item[][] = pks.map(() => []);
  const done = pks.map(() => false);
  const fill = async (i: number) => {
    while (buffers[i]!.length === 0 && !done[i]) {
      const next = await streams[i]!.next();
      if (next.done) done[i] = true;
      else buffers[i]!.push(...next.value.items.filter((item) => item.platsk !== opts.after));
    }
  };
  await Promise.all(pks.map((_, i) => fill(i)));
  for (;;) {
    let best = -1;
    for (let i = 0; i < buffers.length; i++) {
      const head = buffers[i]![0];
      if (!head) continue;
      const b = best < 0 ? undefined : (buffers[best]![0]!.platsk as string);
      if (b === undefined || (desc ? (head.platsk as string) > b : (head.platsk as string) < b)) best = i;
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

/**
 * The one-off migration of a table written before the listings were sharded (docs/capacity.md,
 * "Existing tables"): every gsi1 entry still under `AUDIT`, `TENANTS` or `LEASES` moves to its
 * shard (still in gsi1: run scripts/operator/migrate-platform-listings.ts after it), with a conditional UpdateItem (only if it still carries the old key), so a run can be
 * repeated or interrupted and writers of the new release may run alongside. Returns the moves.
 */
export async function moveToShards(): Promise<Record<'AUDIT' | 'TENANTS' | 'LEASES', number>> {
  const shardKey = {
    AUDIT: (i: Item) => keys.auditIndex(i.gsi1sk as string).platpk,
    TENANTS: (i: Item) => keys.tenantIndex((i.pk as string).slice(2), '').platpk,
    LEASES: (i: Item) => keys.leaseExpiryIndex('', (i.sk as string).slice(keys.leasePrefix.length), '').platpk,
  };
  const moved = { AUDIT: 0, TENANTS: 0, LEASES: 0 };
  for (const old of ['AUDIT', 'TENANTS', 'LEASES'] as const) {
    for await (const page of queryPages({ pk: old, index: 'gsi1' }, { want: () => 100 })) {
      for (const item of page.items) {
        try {
          await db().send(
            new UpdateCommand({
              TableName: tableName(),
              Key: { pk: item.pk, sk: item.sk },
              UpdateExpression: 'SET gsi1pk = :new',
              ConditionExpression: 'gsi1pk = :old',
              ExpressionAttributeValues: { ':new': shardKey[old](item), ':old': old },
            }),
          );
          moved[old]++;
        } catch (error) {
          // moved (or removed from the listing) meanwhile: nothing to do
          if (!(error instanceof ConditionalCheckFailedException)) throw error;
        }
      }
    }
  }
  return moved;
}

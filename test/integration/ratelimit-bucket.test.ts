import { randomBytes } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { BucketRef, Decision } from '../../lib/ratelimit/bucket.js';
import { conditionFailed, intercept } from './dynamo-faults.js';
import { table } from './table.js';
import { held, LEASE_MAX, LEASE_WINDOW, leaseSize, MAX_ATTEMPTS, take } from '../../lib/ratelimit/bucket.js';

/**
 * The token bucket against the suite's DynamoDB Local (real conditional writes), with
 * faults injected on the library's own client for the paths a healthy table never takes.
 */
let t: Awaited<ReturnType<typeof table>>;
const undo: (() => void)[] = [];
beforeAll(async () => {
  t = await table();
});
afterEach(() => {
  while (undo.length > 0) undo.pop()!();
});

const ref = (fields: Partial<BucketRef> = {}): BucketRef => ({
  policy: 'ip',
  key: { pk: `IP#test-${randomBytes(6).toString('hex')}`, sk: 'RATE' },
  attr: 'rl_',
  ttlSeconds: 600,
  ...fields,
});
const cap = (n: number) => ({ known: n, promise: Promise.resolve(n) });
const clock = (ms: number) => {
  const c = { ms, now: () => c.ms };
  return c;
};
/** UpdateItem calls made on one bucket's item. */
function writesTo(r: BucketRef) {
  const calls: Record<string, any>[] = [];
  undo.push(
    intercept(t.db(), (command, input) => {
      if (command === 'UpdateItemCommand' && input.Key?.pk === r.key.pk) calls.push(input);
      return undefined;
    }),
  );
  return calls;
}

describe('token bucket', () => {
  it('admits the capacity, then refuses with the seconds until a token is back', async () => {
    const r = ref();
    const now = () => 1_700_000_000_000;
    const got = [];
    for (let i = 0; i < 4; i++) got.push(await take(r, cap(3), now));
    expect(got.map((d) => d.allowed)).toEqual([true, true, true, false]);
    expect(got.map((d) => d.remaining)).toEqual([2, 1, 0, 0]);
    // allowed: seconds until full again (3 per minute: one token every 20 s)
    expect(got.map((d) => d.resetSeconds)).toEqual([20, 40, 60, 20]);
    expect(got[3]).toEqual({ allowed: false, policy: 'ip', limit: 3, remaining: 0, resetSeconds: 20 });
  });

  it('refills at capacity/60 per second', async () => {
    const r = ref();
    const c = clock(1_700_000_000_000);
    for (let i = 0; i < 6; i++) await take(r, cap(6), c.now);
    expect((await take(r, cap(6), c.now)).allowed).toBe(false);
    c.ms += 9_000; // 0.9 token
    expect(await take(r, cap(6), c.now)).toMatchObject({ allowed: false, resetSeconds: 1 });
    c.ms += 1_000; // 1 token
    expect(await take(r, cap(6), c.now)).toMatchObject({ allowed: true, remaining: 0 });
    expect((await take(r, cap(6), c.now)).allowed).toBe(false);
    // a long pause fills it to the capacity, not beyond
    c.ms += 3_600_000;
    const d = await take(r, cap(6), c.now);
    expect(d).toMatchObject({ allowed: true, remaining: 5, resetSeconds: 10 });
  });

  it('is atomic under concurrency: 30 parallel takes of a 10-token bucket admit exactly 10 and refuse 20, none fails', async () => {
    const r = ref();
    const now = () => 1_700_000_100_000;
    const out = await Promise.all(Array.from({ length: 30 }, () => take(r, cap(10), now)));
    expect(out.filter((d) => d.allowed)).toHaveLength(10);
    expect(out.filter((d) => !d.allowed)).toHaveLength(20);
    expect(out.filter((d) => !d.allowed).every((d) => d.remaining === 0 && d.limit === 10)).toBe(true);
  });

  it('a lowered limit applies at the next refill, a raised one too (never above the new capacity)', async () => {
    const r = ref();
    const c = clock(1_700_000_200_000);
    expect((await take(r, cap(100), c.now)).remaining).toBe(99);
    c.ms += 1000;
    expect(await take(r, cap(2), c.now)).toMatchObject({ allowed: true, limit: 2, remaining: 1 });
    c.ms += 1000;
    expect(await take(r, cap(600), c.now)).toMatchObject({ allowed: true, limit: 600, remaining: 10 });
  });

  it('an unknown capacity is awaited for the first fill', async () => {
    const r = ref();
    const d = await take(r, { promise: Promise.resolve(5) }, () => 1_700_000_300_000);
    expect(d).toMatchObject({ allowed: true, limit: 5, remaining: 4 });
  });

  it('the item: state under the attribute prefix, a TTL in epoch seconds in the future set once, the usage count', async () => {
    const r = ref({ attr: 'rl_x_', count: true, ttlSeconds: 600 });
    const c = clock(1_700_000_400_500);
    await take(r, cap(60), c.now);
    c.ms += 2_000;
    await take(r, cap(60), c.now);
    await take(r, cap(60), c.now);
    const item = await t.get(r.key);
    expect(item).toEqual({ ...r.key, rl_x_ts: 1_700_000_402, rl_x_tok: 58, rl_x_cap: 60, ttl: 1_700_000_400 + 600, requests: 3 });
  });

  it('a refused take changes nothing: no usage count, no state change (its one write fails its condition)', async () => {
    const r = ref({ count: true });
    const now = () => 1_700_000_500_000;
    await take(r, cap(1), now);
    const before = await t.get(r.key);
    const writes = writesTo(r);
    expect((await take(r, cap(1), now)).allowed).toBe(false);
    expect((await take(r, cap(1), now)).allowed).toBe(false);
    expect(writes).toHaveLength(2);
    expect(await t.get(r.key)).toEqual(before);
    expect(before).toMatchObject({ requests: 1, rl_tok: 0 });
  });

  it('a busy caller costs one conditional write per take in the same second', async () => {
    const r = ref();
    const now = () => 1_700_000_600_000;
    await take(r, cap(10), now);
    const writes = writesTo(r);
    await take(r, cap(10), now);
    await take(r, cap(10), now);
    expect(writes).toHaveLength(2);
    expect(writes[0]).toMatchObject({ ConditionExpression: '#ts = :ts AND #tok >= :n', ExpressionAttributeValues: { ':n': 1, ':ts': 1_700_000_600 } });
  });
});

describe('token bucket: leased tokens (docs/cost.md, "Halving it", "Quiet accounts")', () => {
  const counted = async (r: BucketRef) => Number((await t.get(r.key))?.requests ?? 0);

  it('the lease size: twice this process\'s admissions of the last LEASE_WINDOW seconds, at least 1, at most LEASE_MAX and a tenth of a second\'s refill', () => {
    expect([LEASE_MAX, LEASE_WINDOW]).toEqual([10, 4]);
    expect(leaseSize(0, 6000)).toBe(1); // nothing admitted in the window: exact
    expect(leaseSize(1, 6000)).toBe(2);
    expect(leaseSize(3, 6000)).toBe(6);
    expect(leaseSize(5, 6000)).toBe(10);
    expect(leaseSize(100, 6000)).toBe(10);
    expect(leaseSize(100, 3000)).toBe(5); // 50 a second: a lease of at most 5
    expect(leaseSize(100, 1199)).toBe(1); // under 20 a second: no lease
    expect(leaseSize(100, undefined)).toBe(1); // the limit not known yet
  });

  it('a sparse caller (one request per LEASE_WINDOW seconds) is exact: one write per admitted request, the count equal to them, nothing held', async () => {
    const r = ref({ count: true });
    const c = clock(1_700_020_000_000);
    const writes = writesTo(r);
    for (let i = 0; i < 6; i++) {
      expect((await take(r, cap(60_000), c.now)).allowed).toBe(true);
      expect(held(r)).toEqual({ lease: 0, unspent: 0, uncounted: 0 });
      c.ms += LEASE_WINDOW * 1000;
    }
    expect(writes).toHaveLength(6);
    expect(writes.map((w) => w.ExpressionAttributeValues[':counted'])).toEqual([1, 1, 1, 1, 1, 1]);
    expect(await counted(r)).toBe(6);
  });

  it('a quiet caller (5 a second) leases 1, 2, 6, 10 tokens, then writes once per 10 requests; at every request the count is the admitted less those admitted from the lease since the last write, exactly; idle, its next take counts them', async () => {
    const r = ref({ count: true });
    const c = clock(1_700_025_000_000);
    const writes = writesTo(r);
    let admitted = 0;
    const wroteAt: number[] = [];
    for (let i = 1; i <= 63; i++) {
      const before = writes.length;
      expect((await take(r, cap(6000), c.now)).allowed).toBe(true);
      admitted++;
      if (writes.length > before) wroteAt.push(i);
      // none invented (the count above the admitted), none lost (below it by more than what this process has not written yet)
      expect(await counted(r)).toBe(admitted - held(r).uncounted);
      expect(held(r).uncounted).toBeLessThanOrEqual(LEASE_MAX - 1);
      c.ms += 200;
    }
    // the slow start, then k = 10; each write counts its own request and the lease's spent since the last one
    expect(wroteAt).toEqual([1, 2, 4, 10, 20, 30, 40, 50, 60]);
    expect(writes.map((w) => w.ExpressionAttributeValues[':counted'])).toEqual([1, 1, 2, 6, 10, 10, 10, 10, 10]);
    expect(held(r)).toEqual({ lease: 6, unspent: 0, uncounted: 3 });
    expect(await counted(r)).toBe(60);
    // idle past the window: the lease is over, the next take (k = 1) counts the 3 with its own, and gives the 6 tokens back
    c.ms += LEASE_WINDOW * 1000;
    writes.length = 0;
    await take(r, cap(6000), c.now);
    admitted++;
    expect(writes).toHaveLength(1);
    expect(writes[0]!.ExpressionAttributeValues).toMatchObject({ ':counted': 1 + 3 });
    expect(held(r)).toEqual({ lease: 0, unspent: 0, uncounted: 0 });
    expect(await counted(r)).toBe(admitted); // 64, exactly
    // and the tokens are back in the bucket (the refills capped at the capacity), less the one taken
    expect(Number((await t.get(r.key))!.rl_tok)).toBe(6000 - 1);
  });

  it('a busy caller takes k tokens with one write, spends them locally within the window, gives back the rest with its next write', async () => {
    const r = ref({ count: true });
    const c = clock(1_700_021_000_000);
    const writes = writesTo(r);
    const out = [];
    for (let i = 0; i < 20; i++) out.push(await take(r, cap(60_000), c.now)); // second 0: leases of 1, 2, 6, 10, 10
    expect(out.every((d) => d.allowed)).toBe(true);
    expect(writes).toHaveLength(5);
    expect(await counted(r)).toBe(20); // the 20th take's write counted the 9 before it and itself; its 9 tokens held, not counted
    expect(held(r)).toEqual({ lease: 9, unspent: 0, uncounted: 0 });
    // the remaining tokens seen by the caller go down one by one through a lease
    expect(out.slice(9, 12).map((d) => d.remaining)).toEqual([out[9]!.remaining, out[9]!.remaining - 1, out[9]!.remaining - 2]);
    c.ms += 1_000;
    writes.length = 0;
    for (let i = 0; i < 12; i++) await take(r, cap(60_000), c.now); // second 1: 9 from the lease, then a lease of 10: 3 spent, 7 held
    expect(writes).toHaveLength(1);
    expect(writes[0]!.ExpressionAttributeValues).toMatchObject({ ':counted': 1 + 9 });
    expect(held(r)).toEqual({ lease: 7, unspent: 0, uncounted: 2 });
    expect(await counted(r)).toBe(32 - 2); // short by the 2 admitted from the lease since its write, within LEASE_MAX - 1
    // another process took most of the bucket meanwhile (so the refill below is not capped)
    await t.put({ ...(await t.get(r.key))!, rl_tok: 100 });
    c.ms += LEASE_WINDOW * 1000;
    writes.length = 0;
    await take(r, cap(60_000), c.now); // the lease expired, nothing admitted in the window: k = 1, the 7 tokens given back
    expect(held(r)).toEqual({ lease: 0, unspent: 0, uncounted: 0 });
    // a compare-and-set lost to the put above, then the refill from the item's state
    expect(writes).toHaveLength(2);
    expect(writes[1]!.ExpressionAttributeValues).toMatchObject({ ':counted': 1 + 2 });
    expect(await counted(r)).toBe(33);
    // and the tokens, from the item's state: LEASE_WINDOW seconds' refill (1,000 each) plus the 7, less the one taken
    expect(Number((await t.get(r.key))!.rl_tok)).toBe(100 + LEASE_WINDOW * 1000 + 7 - 1);
  });

  it('an item gone meanwhile (TTL) is created afresh: the requests admitted from the lease are counted on it, the tokens not spent are dropped (it is full)', async () => {
    const r = ref({ count: true });
    const c = clock(1_700_024_000_000);
    for (let i = 0; i < 22; i++) await take(r, cap(60_000), c.now);
    expect(held(r)).toEqual({ lease: 7, unspent: 0, uncounted: 2 });
    expect(await t.get(r.key)).toMatchObject({ requests: 20 });
    await t.remove(r.key);
    c.ms += LEASE_WINDOW * 1000;
    await take(r, cap(60_000), c.now); // the compare-and-set finds no item: created, counting its own and the 2
    expect(held(r)).toEqual({ lease: 0, unspent: 0, uncounted: 0 });
    expect(await t.get(r.key)).toMatchObject({ requests: 3, rl_tok: 59_999 });
    c.ms += LEASE_WINDOW * 1000;
    await take(r, cap(60_000), c.now);
    expect(await t.get(r.key)).toMatchObject({ requests: 4 });
  });

  it('a give-back never fills the bucket past its capacity', async () => {
    const r = ref({ count: true });
    const c = clock(1_700_022_000_000);
    for (let i = 0; i < 20; i++) await take(r, cap(6_000), c.now);
    expect(held(r).lease).toBe(9);
    c.ms += 60_000; // full again
    expect(await take(r, cap(6_000), c.now)).toMatchObject({ allowed: true, remaining: 5999 });
    expect(await t.get(r.key)).toMatchObject({ rl_tok: 5999, rl_cap: 6000, requests: 21 });
  });

  it('takes of one process running side by side count each request once (the pending count is claimed by one write, put back when it refuses)', async () => {
    const r = ref({ count: true });
    const c = clock(1_700_027_000_000);
    let admitted = 0;
    for (let i = 0; i < 12; i++) if ((await take(r, cap(6000), c.now)).allowed) admitted++; // leases of 1, 2, 6, 10: 2 spent from the last
    expect(held(r)).toMatchObject({ lease: 7, uncounted: 2 });
    c.ms += LEASE_WINDOW * 1000;
    const out = await Promise.all(Array.from({ length: 30 }, () => take(r, cap(6000), c.now)));
    admitted += out.filter((d) => d.allowed).length;
    expect(await counted(r)).toBe(admitted - held(r).uncounted);
    // a lease spent to its end (9 pending), then a take the bucket refuses: it puts its claim back
    c.ms += 1000;
    for (let i = 0; i < 10; i++) if ((await take(r, cap(6000), c.now)).allowed) admitted++;
    expect(held(r)).toMatchObject({ lease: 0, uncounted: 9 });
    await t.put({ ...(await t.get(r.key))!, rl_ts: Math.floor(c.ms / 1000), rl_tok: 0 });
    expect((await take(r, cap(6000), c.now)).allowed).toBe(false);
    expect(held(r).uncounted).toBe(9);
    expect(await counted(r)).toBe(admitted - 9);
    c.ms += 1000;
    expect((await take(r, cap(6000), c.now)).allowed).toBe(true);
    admitted++;
    expect(held(r).uncounted).toBe(0);
    expect(await counted(r)).toBe(admitted);
  });
});

describe('token bucket: state another process changed', () => {
  it('an empty bucket remembered by this process is checked against the item before refusing', async () => {
    const r = ref();
    const now = () => 1_700_001_000_000;
    await take(r, cap(1), now); // remembered: 0 tokens
    // another process's view: the item holds tokens (e.g. it refilled with a higher limit)
    await t.put({ ...r.key, rl_ts: 1_700_001_000, rl_tok: 3, rl_cap: 3, ttl: 1 });
    expect(await take(r, cap(1), now)).toMatchObject({ allowed: true, remaining: 2 });
    // and once the item is empty, refused on the item's word
    await t.put({ ...r.key, rl_ts: 1_700_001_000, rl_tok: 0, rl_cap: 3, ttl: 1 });
    expect(await take(r, cap(1), now)).toMatchObject({ allowed: false, limit: 3 });
  });

  it('a refill that this process computes as short of a token is verified against the item', async () => {
    const r = ref();
    const c = clock(1_700_002_000_000);
    await take(r, cap(30), c.now); // 29 left
    await t.put({ ...r.key, rl_ts: 1_700_002_000, rl_tok: 0, rl_cap: 30, ttl: 1 }); // others took the rest
    c.ms += 1_000; // +0.5 token
    const writes = writesTo(r);
    // remembered 29 → refill write with a stale compare-and-set → refused by the item's state (0.5 tokens)
    expect(await take(r, cap(30), c.now)).toEqual({ allowed: false, policy: 'ip', limit: 30, remaining: 0, resetSeconds: 1 });
    expect(writes.length).toBeGreaterThanOrEqual(1);
    // remembered as 0.5 (known from the item): another second brings one token
    c.ms += 1_000;
    expect(await take(r, cap(30), c.now)).toMatchObject({ allowed: true, remaining: 0 });
    // the item is empty again; this process's memory says 0 at that second: a later second's
    // refill computes 0.5, short of a token, and checks the item, which another process refilled
    await t.put({ ...r.key, rl_ts: 1_700_002_003, rl_tok: 4, rl_cap: 30, ttl: 1 });
    c.ms += 1_000;
    expect(await take(r, cap(30), c.now)).toMatchObject({ allowed: true, remaining: 3 });
  });

  it('a state read back from the item with exactly one token left is taken, not refused', async () => {
    const r = ref();
    const c = clock(1_700_007_000_000);
    await take(r, cap(60), c.now); // remembered: 59 at T
    await t.put({ ...r.key, rl_ts: 1_700_007_001, rl_tok: 1, rl_cap: 60, ttl: 1 }); // another process: 1 left at T+1
    c.ms += 1_000;
    expect(await take(r, cap(60), c.now)).toMatchObject({ allowed: true, remaining: 0 });
    expect(await t.get(r.key)).toMatchObject({ rl_tok: 0 });
  });

  it('a refill compare-and-set lost to another process is retried from the state the failure returned', async () => {
    const r = ref();
    const c = clock(1_700_003_000_000);
    await take(r, cap(60), c.now); // 59 at T
    await t.put({ ...r.key, rl_ts: 1_700_003_001, rl_tok: 10, rl_cap: 60, ttl: 1 }); // another process refilled at T+1
    c.ms += 1_000;
    const writes = writesTo(r);
    expect(await take(r, cap(60), c.now)).toMatchObject({ allowed: true, remaining: 9 });
    expect(writes).toHaveLength(2);
    expect(writes[0]).toMatchObject({ ConditionExpression: '#ts = :oldts AND #tok = :oldtok', ExpressionAttributeValues: { ':oldts': 1_700_003_000, ':oldtok': 59 } });
    expect(writes[1]).toMatchObject({ ConditionExpression: '#ts = :ts AND #tok >= :n' });
  });
});

describe('token bucket: failures', () => {
  it('any error other than a failed condition is not a lost race: it propagates at once', async () => {
    const r = ref();
    const broken = new Error('ProvisionedThroughputExceeded');
    let calls = 0;
    undo.push(
      intercept(t.db(), (command, input) => {
        if (command === 'UpdateItemCommand' && input.Key?.pk === r.key.pk) {
          calls++;
          throw broken;
        }
        return undefined;
      }),
    );
    await expect(take(r, cap(10), () => 1_700_004_000_000)).rejects.toBe(broken);
    expect(calls).toBe(1);
  });

  it('refuses (never admits) after MAX_ATTEMPTS lost races, and logs the refusal', async () => {
    const r = ref();
    let calls = 0;
    const now = 1_700_005_000_000;
    const lost = await conditionFailed({ ...r.key, rl_ts: now / 1000, rl_tok: 5, rl_cap: 10 });
    undo.push(
      intercept(t.db(), (command, input) => {
        if (command === 'UpdateItemCommand' && input.Key?.pk === r.key.pk) {
          calls++;
          throw lost; // every write finds the item changed, with tokens left
        }
        return undefined;
      }),
    );
    const { logger } = await import('../../lib/core/logger.js');
    const warn = vi.spyOn(logger, 'warn');
    expect(await take(r, cap(10), () => now)).toEqual({ allowed: false, policy: 'ip', limit: 10, remaining: 0, resetSeconds: 1 });
    expect(calls).toBe(MAX_ATTEMPTS);
    expect(MAX_ATTEMPTS).toBe(8);
    expect(warn).toHaveBeenCalledWith('rate limit bucket: contended, refused', { policy: 'ip', attempts: 8 });
    warn.mockRestore();
  });

  it('a throttled item (the SDK gave up retrying) is contention: refused at once, not admitted', async () => {
    const r = ref();
    let calls = 0;
    const { ProvisionedThroughputExceededException } = await import('@aws-sdk/client-dynamodb');
    undo.push(
      intercept(t.db(), (command, input) => {
        if (command === 'UpdateItemCommand' && input.Key?.pk === r.key.pk) {
          calls++;
          throw new ProvisionedThroughputExceededException({ message: 'hot', $metadata: {} });
        }
        return undefined;
      }),
    );
    // the capacity is not known yet: the refusal names the limit once read
    expect(await take(r, { promise: Promise.resolve(12) }, () => 1_700_005_500_000)).toEqual({ allowed: false, policy: 'ip', limit: 12, remaining: 0, resetSeconds: 1 });
    expect(calls).toBe(1);
  });

  it('a failed condition without the item (no ALL_OLD) starts over from the create path', async () => {
    const r = ref();
    const now = () => 1_700_006_000_000;
    let first = true;
    const missing = await conditionFailed();
    const writes: Record<string, any>[] = [];
    undo.push(
      intercept(t.db(), (command, input) => {
        if (command === 'UpdateItemCommand' && input.Key?.pk === r.key.pk) {
          writes.push(input);
          if (first) {
            first = false;
            throw missing;
          }
        }
        return undefined;
      }),
    );
    expect(await take(r, cap(10), now)).toMatchObject({ allowed: true, remaining: 9 });
    expect(writes.map((w) => w.ConditionExpression)).toEqual(['attribute_not_exists(#ts)', 'attribute_not_exists(#ts)']);
  });
});

describe('token bucket: sharded and contended', () => {
  const sharded = (shards: number): BucketRef => {
    const base = `IP#shard-${randomBytes(6).toString('hex')}`;
    return ref({ key: { pk: base, sk: 'RATE' }, keyOf: (n) => ({ pk: base, sk: n === 0 ? 'RATE' : `RATE#${n}` }), shards, count: true });
  };
  const items = async (r: BucketRef) => Promise.all(Array.from({ length: r.shards! }, (_, n) => t.get(r.keyOf!(n))));

  it('spreads takes over its shards, each holding capacity/shards; the sum admitted never exceeds the capacity', async () => {
    const r = sharded(4);
    const now = () => 1_700_010_000_000;
    const out = [];
    for (let i = 0; i < 30; i++) out.push(await take(r, cap(20), now));
    const admitted = out.filter((d) => d.allowed).length;
    expect(admitted).toBeLessThanOrEqual(20);
    // a refusal tries a second shard: with 4 shards of 5, at least 10 pass before two empty ones meet
    expect(admitted).toBeGreaterThanOrEqual(10);
    const stored = await items(r);
    // every admitted take is counted on the shard that admitted it
    expect(stored.reduce((n, i) => n + Number(i?.requests ?? 0), 0)).toBe(admitted);
    for (const i of stored.filter((x) => x)) expect(i).toMatchObject({ rl_cap: 5 });
    // the decision reports the whole bucket: its limit, and the shard's tokens scaled up
    expect(out[0]).toMatchObject({ allowed: true, limit: 20, remaining: 16 });
    expect(out.find((d) => !d.allowed)).toMatchObject({ limit: 20, remaining: 0 });
  });

  it('an unknown capacity is awaited and split over the shards', async () => {
    const r = sharded(3);
    expect(await take(r, { promise: Promise.resolve(30) }, () => 1_700_010_100_000)).toMatchObject({ allowed: true, limit: 30, remaining: 27 });
  });

  it('300 concurrent takes of a 100-token bucket while the clock crosses seconds: never more than the capacity plus the refill, every admission counted', async () => {
    const r = ref({ count: true });
    const c = clock(1_700_011_000_000);
    const out = await Promise.all(
      Array.from({ length: 300 }, async (_, i) => {
        if (i % 50 === 0) c.ms += 1_000; // six new seconds during the burst: refill races each time
        return take(r, cap(100), c.now);
      }),
    );
    const admitted = out.filter((d) => d.allowed).length;
    // 100 tokens + 6 s × 100/60 per second
    expect(admitted).toBeLessThanOrEqual(100 + 10);
    expect(admitted).toBeGreaterThanOrEqual(100);
    expect(Number((await t.get(r.key))!.requests)).toBe(admitted);
    for (const d of out.filter((x) => !x.allowed)) expect(d.resetSeconds).toBeGreaterThanOrEqual(1);
  });
});

describe('token bucket: this process remembers at most 10,000 buckets (slow: last in this file)', () => {
  it('the oldest remembered bucket is forgotten first: its next take starts from the create path again', async () => {
    // the table is emulated in-process for these buckets: 10,001 buckets without 10,001 round trips
    const items = new Map<string, Record<string, number>>();
    const creates: string[] = [];
    const prefix = `MEMO#${randomBytes(4).toString('hex')}#`;
    undo.push(
      intercept(t.db(), async (command, input) => {
        if (command !== 'UpdateItemCommand' || !String(input.Key?.pk).startsWith(prefix)) return undefined;
        const pk = input.Key.pk as string;
        const v = input.ExpressionAttributeValues as Record<string, number>;
        const item = items.get(pk);
        if (input.ConditionExpression === 'attribute_not_exists(#ts)') {
          creates.push(pk);
          if (item) throw await conditionFailed({ pk, sk: 'RATE', ...item });
          items.set(pk, { rl_ts: v[':ts']!, rl_tok: v[':tok']!, rl_cap: v[':cap']! });
          return { output: {} };
        }
        if (!item || item.rl_ts !== v[':ts'] || item.rl_tok! < 1) throw await conditionFailed(item ? { pk, sk: 'RATE', ...item } : undefined);
        item.rl_tok! -= 1;
        return { output: { Attributes: { pk, sk: 'RATE', ...item } } };
      }),
    );
    const now = () => 1_700_009_000_000;
    const refs = Array.from({ length: 10_001 }, (_, i) => ref({ key: { pk: `${prefix}${i}`, sk: 'RATE' } }));
    for (const r of refs.slice(0, 10_000)) await take(r, cap(100), now);
    creates.length = 0;
    await take(refs[0]!, cap(100), now); // remembered at 10,000 buckets: the fast path
    await take(refs[9_999]!, cap(100), now);
    expect(creates).toEqual([]);
    await take(refs[10_000]!, cap(100), now); // the 10,001st: the oldest (the first) is forgotten
    expect(creates).toEqual([refs[10_000]!.key.pk]);
    creates.length = 0;
    await take(refs[1]!, cap(100), now); // still remembered
    expect(creates).toEqual([]);
    expect(await take(refs[0]!, cap(100), now)).toMatchObject({ allowed: true, remaining: 97 }); // forgotten: create path, then the item's state
    expect(creates).toEqual([refs[0]!.key.pk]);
  });
});

describe('token bucket: two processes leasing (after the rest: it resets the module registry)', () => {
  const counted = async (r: BucketRef) => Number((await t.get(r.key))?.requests ?? 0);
  it('two busy processes (fresh module instances) never admit more than the tokens plus the refill; the count is short of the admitted by exactly what they admitted from leases since their last writes, within the bound', async () => {
    const r = ref({ count: true });
    const start = 1_700_023_000_000;
    const c = clock(start);
    await t.put({ ...r.key, rl_ts: start / 1000, rl_tok: 50, rl_cap: 6000, requests: 0, ttl: 1 });
    vi.resetModules();
    const a = await import('../../lib/ratelimit/bucket.js');
    vi.resetModules();
    const b = await import('../../lib/ratelimit/bucket.js');
    expect(a.take).not.toBe(b.take);
    const takes = { a: 0, b: 0 };
    let admitted = 0;
    let leased = 0;
    const seconds = 5;
    for (let s = 0; s < seconds; s++) {
      for (let i = 0; i < 120; i++) {
        for (const [name, m] of [['a', a], ['b', b]] as const) {
          const d = await m.take(r, cap(6000), c.now);
          if (d.allowed) {
            admitted++;
            takes[name]++;
          }
        }
        leased = Math.max(leased, a.held(r).lease, b.held(r).lease);
      }
      c.ms += 1_000;
    }
    // 50 tokens, then 100 a second refilled at seconds 1..4
    expect(admitted).toBeLessThanOrEqual(50 + (seconds - 1) * 100);
    // held back from the other process: at most LEASE_MAX - 1 per process and second
    expect(admitted).toBeGreaterThanOrEqual(50 + (seconds - 1) * 100 - 2 * (LEASE_MAX - 1) * (seconds - 1));
    expect(leased).toBeGreaterThan(1); // it did lease
    const pending = a.held(r).uncounted + b.held(r).uncounted;
    expect(admitted - (await counted(r))).toBe(pending);
    expect(pending).toBeLessThanOrEqual(2 * (LEASE_MAX - 1));
  });

  it('an attacker: one account, two quiet containers holding leases, then a burst from both in one second: admitted at most the bucket\'s tokens plus what the two held (≤ 2 × (LEASE_MAX − 1)); metered exactly', async () => {
    const r = ref({ count: true });
    const start = 1_700_026_000_000;
    const c = clock(start);
    await t.put({ ...r.key, rl_ts: start / 1000, rl_tok: 6000, rl_cap: 6000, requests: 0, ttl: 1 });
    vi.resetModules();
    const a = await import('../../lib/ratelimit/bucket.js');
    vi.resetModules();
    const b = await import('../../lib/ratelimit/bucket.js');
    const both = [a, b] as const;
    const pendingOf = (m: typeof a) => m.held(r).uncounted;
    let admitted = 0;
    // 3 seconds at a quiet account's pace: 5 a second from each container
    for (let i = 0; i < 15; i++) {
      for (const m of both) if ((await m.take(r, cap(6000), c.now)).allowed) admitted++;
      expect(await counted(r)).toBe(admitted - pendingOf(a) - pendingOf(b));
      c.ms += 200;
    }
    expect(admitted).toBe(30);
    // both now hold part of a lease; the bucket is drained to 20 tokens (another container of the attacker, say) at this second
    const heldAtBurst = a.held(r).lease + b.held(r).lease;
    expect(heldAtBurst).toBeGreaterThan(0);
    expect(heldAtBurst).toBeLessThanOrEqual(2 * (LEASE_MAX - 1));
    const sec = Math.floor(c.ms / 1000);
    await t.put({ ...(await t.get(r.key))!, rl_ts: sec, rl_tok: 20 });
    let burst = 0;
    for (let i = 0; i < 100; i++) for (const m of both) if ((await m.take(r, cap(6000), c.now)).allowed) burst++;
    admitted += burst;
    // within the second: the bucket's 20 plus what the containers held when it began, never more
    expect(burst).toBeLessThanOrEqual(20 + heldAtBurst);
    expect(burst).toBeGreaterThanOrEqual(20);
    // every admitted request of the burst counted once, or pending in the process that admitted it
    expect(await counted(r)).toBe(admitted - pendingOf(a) - pendingOf(b));
    // idle past the window, one request each: what is pending is counted, the count equals the requests admitted, exactly
    c.ms += LEASE_WINDOW * 1000;
    for (const m of both) if ((await m.take(r, cap(6000), c.now)).allowed) admitted++;
    expect(pendingOf(a) + pendingOf(b)).toBe(0);
    expect(await counted(r)).toBe(admitted);
  });
});

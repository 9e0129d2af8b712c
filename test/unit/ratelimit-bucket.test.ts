import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { useRuntimeConfig } from '../helpers/in-process.js';
import type { BucketRef, Decision } from '../../lib/ratelimit/bucket.js';

/** The token bucket against the suite's DynamoDB Local (real conditional writes). */
let take: (ref: BucketRef, capacity: { known?: number; promise: Promise<number> }, nowMs?: () => number) => Promise<Decision>;
beforeAll(async () => {
  useRuntimeConfig();
  ({ take } = await import('../../lib/ratelimit/bucket.js'));
});

const ref = (): BucketRef => ({ policy: 'ip', key: { pk: `IP#test-${randomBytes(6).toString('hex')}`, sk: 'RATE' }, attr: 'rl_', ttlSeconds: 600 });
const cap = (n: number) => ({ known: n, promise: Promise.resolve(n) });

describe('token bucket', () => {
  it('admits the capacity, then refuses with the seconds until a token is back', async () => {
    const r = ref();
    const now = () => 1_700_000_000_000;
    const got = [];
    for (let i = 0; i < 4; i++) got.push(await take(r, cap(3), now));
    expect(got.map((d) => d.allowed)).toEqual([true, true, true, false]);
    expect(got.map((d) => d.remaining)).toEqual([2, 1, 0, 0]);
    // 3 per minute: one token every 20 s
    expect(got[3]).toMatchObject({ policy: 'ip', limit: 3, resetSeconds: 20 });
  });

  it('refills at capacity/60 per second', async () => {
    const r = ref();
    let t = 1_700_000_000_000;
    const now = () => t;
    for (let i = 0; i < 6; i++) await take(r, cap(6), now);
    expect((await take(r, cap(6), now)).allowed).toBe(false);
    t += 9_000; // 0.9 token
    expect((await take(r, cap(6), now)).allowed).toBe(false);
    t += 1_000; // 1 token
    expect((await take(r, cap(6), now)).allowed).toBe(true);
    expect((await take(r, cap(6), now)).allowed).toBe(false);
  });

  it('is atomic under concurrency: 30 parallel takes of a 10-token bucket admit exactly 10', async () => {
    const r = ref();
    const now = () => 1_700_000_100_000;
    const out = await Promise.all(Array.from({ length: 30 }, () => take(r, cap(10), now).catch(() => null)));
    expect(out.filter((d) => d?.allowed).length).toBe(10);
  });

  it('a lowered limit applies at the next refill', async () => {
    const r = ref();
    let t = 1_700_000_200_000;
    const now = () => t;
    expect((await take(r, cap(100), now)).remaining).toBe(99);
    t += 1000;
    const d = await take(r, cap(2), now);
    expect(d).toMatchObject({ allowed: true, limit: 2, remaining: 1 });
  });
});

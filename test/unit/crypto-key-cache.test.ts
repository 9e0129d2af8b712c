import { describe, expect, it } from 'vitest';
import { KeyCache } from '../../lib/crypto/key-cache.js';

/** A KMS stand-in: counts its calls per id; a call answers when the test says so. */
function kms() {
  const calls: string[] = [];
  const pending: { id: string; ok: (v: string) => void; fail: (e: Error) => void }[] = [];
  const make = (id: string) => () => {
    calls.push(id);
    return new Promise<string>((ok, fail) => pending.push({ id, ok, fail }));
  };
  const answer = async (value?: string) => {
    const p = pending.shift()!;
    p.ok(value ?? `key-of-${p.id}-${calls.length}`);
    await Promise.resolve();
  };
  const refuse = async () => {
    pending.shift()!.fail(new Error('AccessDenied'));
    await Promise.resolve();
  };
  return { calls, make, answer, refuse };
}

const clock = () => {
  let t = 1_000_000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
};

describe('KeyCache (lib/crypto/key-cache.ts): the one per-container cache of KMS data keys', () => {
  it('serves a key for ttlMs after its call answered, then calls KMS again', async () => {
    const k = kms();
    const c = clock();
    const cache = new KeyCache<string>({ max: 10, ttlMs: 300_000, now: c.now });
    const first = cache.get('t1', k.make('t1'));
    await k.answer('one');
    expect(await first).toBe('one');
    c.advance(299_999);
    const warm = cache.get('t1', k.make('t1'));
    expect(k.calls, 'a warm key made a KMS call').toEqual(['t1']);
    expect(await warm).toBe('one');
    c.advance(1);
    const again = cache.get('t1', k.make('t1'));
    await k.answer('two');
    expect(await again, 'an expired key was served').toBe('two');
    expect(k.calls).toEqual(['t1', 't1']);
  });

  it('reads ttlMs at each call (DATA_KEY_CACHE_SECONDS can change) and Infinity keeps a key until evicted', async () => {
    const k = kms();
    const c = clock();
    let ttl = 1000;
    const cache = new KeyCache<string>({ max: 10, ttlMs: () => ttl, now: c.now });
    const a = cache.get('a', k.make('a'));
    await k.answer();
    await a;
    ttl = 0;
    const b = cache.get('b', k.make('b'));
    await k.answer();
    await b;
    const b2 = cache.get('b', k.make('b'));
    await k.answer();
    await b2;
    expect(k.calls, 'a key cached for 0 ms was served again').toEqual(['a', 'b', 'b']);

    const forever = new KeyCache<string>({ max: 10, ttlMs: Number.POSITIVE_INFINITY, now: c.now });
    const f = forever.get('f', k.make('f'));
    await k.answer();
    await f;
    c.advance(10 * 365 * 86_400_000);
    const f2 = forever.get('f', k.make('f'));
    expect(k.calls.filter((x) => x === 'f'), 'a key held for Infinity expired').toEqual(['f']);
    await f2;
  });

  it('holds at most max keys: the oldest goes first', async () => {
    const k = kms();
    const cache = new KeyCache<string>({ max: 2, ttlMs: 60_000 });
    for (const id of ['a', 'b', 'c']) {
      const p = cache.get(id, k.make(id));
      await k.answer();
      await p;
    }
    expect(cache.size).toBe(2);
    const held = [cache.get('b', k.make('b')), cache.get('c', k.make('c'))];
    expect(k.calls, 'a key within the bound was fetched again').toEqual(['a', 'b', 'c']);
    await Promise.all(held);
    const a = cache.get('a', k.make('a'));
    await k.answer();
    await a;
    expect(k.calls, 'the oldest key was not the one evicted').toEqual(['a', 'b', 'c', 'a']);
  });

  it('keeps no failed call: the next caller tries again', async () => {
    const k = kms();
    const cache = new KeyCache<string>({ max: 10, ttlMs: 60_000 });
    const failed = cache.get('t1', k.make('t1'));
    await k.refuse();
    await expect(failed).rejects.toThrow('AccessDenied');
    expect(cache.size).toBe(0);
    const next = cache.get('t1', k.make('t1'));
    await k.answer('fresh');
    expect(await next, 'a failed call was kept').toBe('fresh');
    expect(k.calls).toEqual(['t1', 't1']);
  });

  it('shares one in-flight call between concurrent callers of one key, not between keys', async () => {
    const k = kms();
    const cache = new KeyCache<string>({ max: 10, ttlMs: 60_000 });
    const many = [cache.get('t1', k.make('t1')), cache.get('t1', k.make('t1')), cache.get('t1', k.make('t1')), cache.get('t2', k.make('t2'))];
    expect(k.calls, 'concurrent callers of one key each called KMS').toEqual(['t1', 't2']);
    await k.answer('k1');
    await k.answer('k2');
    expect(await Promise.all(many)).toEqual(['k1', 'k1', 'k1', 'k2']);
  });

  it('a caller whose shared call failed tries once with its own call', async () => {
    const k = kms();
    const cache = new KeyCache<string>({ max: 10, ttlMs: 60_000 });
    const first = cache.get('t1', k.make('t1'));
    const joined = cache.get('t1', k.make('t1'));
    await k.refuse(); // e.g. the first caller's request was refused admission
    await expect(first).rejects.toThrow('AccessDenied');
    await Promise.resolve();
    expect(k.calls, 'the joined caller did not try on its own').toEqual(['t1', 't1']);
    await k.answer('own');
    expect(await joined).toBe('own');
    const kept = cache.get('t1', k.make('t1'));
    expect(k.calls, 'the retry was not kept').toHaveLength(2);
    expect(await kept).toBe('own');
  });
});

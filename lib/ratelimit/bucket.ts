import { randomInt } from 'node:crypto';
import { logger } from '../core/logger.js';
import { onShutdown } from '../core/shutdown.js';
import { currentScope, withTenant } from '../tenancy/scope.js';
import { addCount, refill, refusedItem, takeTokens } from './store.js';

/**
 * A token bucket in one table item, taken with conditional UpdateItems (no read first).
 *
 * State: `ts` (the second the bucket was last refilled), `tok` (tokens left), `cap`
 * (capacity, = the per-minute limit; refill rate cap/60 per second). Refill happens once
 * per second:
 *
 * - fast path, the same second: `SET tok = tok - n` if `ts = <that second> AND tok >= n`:
 *   one write, the common case for a busy caller (n = 1, or the lease below);
 * - refill path, a new second: the new state is computed from the last known state
 *   (remembered from the previous call in this process, or returned by a failed condition
 *   as ALL_OLD) and written if the item still holds exactly that state (compare-and-set);
 *   a lost race re-reads from the condition failure and tries again.
 *
 * So a request costs one conditional write in the common case (the usage meter's ADD rides
 * on the same write), two when another process refilled the bucket first; a process that
 * admitted requests of the bucket in the last few seconds leases several tokens with that one
 * write and spends them without one (`take`, below). A refused take
 * writes nothing. Limits are read with the caller's tenant, in parallel; a refill uses the
 * limit the caller passes as known (the gate remembers each account's last read limit) or
 * else awaits the read, so a changed quota applies from the next refill after it was read.
 *
 * A take never admits a request it did not count: when the races are lost MAX_ATTEMPTS
 * times in a row (or the table throttles the item), the request is refused with
 * `Retry-After: 1` and the refusal is logged (`rate limit bucket: contended, refused`),
 * never admitted unchecked.
 *
 * Sharding (docs/capacity.md): a bucket of `shards` > 1 is split into that many items, each
 * holding capacity/shards tokens refilled at capacity/shards/60 per second. A take picks a
 * shard at random and, when that one is empty, one other; so no item takes more than its
 * share of the writes, and the sum admitted never exceeds the capacity (a refusal may come
 * while another shard still holds a token: the limit is never exceeded, only approached).
 */
export interface Decision {
  readonly allowed: boolean;
  /** The policy's name (`account`, `credential`, `ip`), its capacity and window. */
  readonly policy: string;
  readonly limit: number;
  readonly remaining: number;
  /** Seconds until the bucket is full again (allowed) or holds one token (refused). */
  readonly resetSeconds: number;
}

export interface BucketRef {
  readonly policy: string;
  readonly key: { readonly pk: string; readonly sk: string };
  /** Attribute name prefix of this bucket inside the item (several buckets may share an item). */
  readonly attr: string;
  /** Also `ADD requests 1` on success (the usage meter). */
  readonly count?: boolean;
  readonly ttlSeconds: number;
  /** Items the bucket is spread over (default 1: `key` alone); `keyOf(n)` names shard n (`keyOf(0)` is `key`). */
  readonly shards?: number;
  readonly keyOf?: (shard: number) => { readonly pk: string; readonly sk: string };
}

/** Lost compare-and-set races (or throttled writes) before a take refuses the request. */
export const MAX_ATTEMPTS = 8;

/** Errors of a contended item: the SDK has already retried them; the take then refuses. */
const CONTENDED = new Set(['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded']);

interface State {
  readonly ts: number;
  readonly tok: number;
  readonly cap: number;
}

const memo = new Map<string, State>();
const MEMO_MAX = 10_000;
const remember = (k: string, s: State) => {
  if (memo.size >= MEMO_MAX && !memo.has(k)) memo.delete(memo.keys().next().value as string);
  memo.set(k, s);
};

const round = (n: number) => Math.round(n * 1e6) / 1e6;

function decision(policy: string, allowed: boolean, s: State, shards = 1): Decision {
  const rate = s.cap / 60;
  const reset = allowed ? (s.cap - s.tok) / rate : (1 - s.tok) / rate;
  return {
    allowed,
    policy,
    limit: round(s.cap * shards),
    remaining: Math.max(0, Math.floor(s.tok * shards)),
    resetSeconds: Math.max(allowed ? 0 : 1, Math.ceil(reset)),
  };
}

function stateOf(item: Record<string, unknown> | undefined, attr: string): State | undefined {
  if (!item || typeof item[`${attr}ts`] !== 'number') return undefined;
  return { ts: item[`${attr}ts`] as number, tok: item[`${attr}tok`] as number, cap: item[`${attr}cap`] as number };
}

type Capacity = { known?: number; promise: Promise<number> };

/**
 * Leases (docs/cost.md, "Halving it" and "Quiet accounts"; docs/capacity.md, "Leased tokens").
 * One write may take k tokens; the process spends the k − 1 left over
 * locally, without a write, for LEASE_WINDOW seconds (the second it took them in and the
 * next LEASE_WINDOW − 1). k is sized by what this process admitted from the bucket in the
 * last LEASE_WINDOW seconds, this one included (Lambda runs one request at a time per
 * container), doubled (a slow start: the current second is counted while it is still going),
 *
 *   k = min(LEASE_MAX, 2 × those admissions, a tenth of one second's refill of the bucket (capacity/600)), at least 1;
 *
 * so the first request after LEASE_WINDOW idle seconds is exact (k = 1), the next ones lease
 * 2, 6, 10 tokens (about 6 writes for the first 40 requests of a burst), and a caller at
 * r requests a second then writes once per min(LEASE_MAX, r × LEASE_WINDOW) requests, quiet
 * (r ≥ 2.5: k = 10, 0.1 write a request) or busy alike. A bucket refilling under 10 tokens a
 * second (a quota under 600 a minute; per shard) never leases.
 *
 * The count (`ADD requests`, the usage meter) counts requests admitted, never tokens taken:
 * each write counts its own request plus the requests this process admitted from its leases
 * since its last write of that account (`uncounted`), on whichever of the account's items
 * (shard, day) that write goes to. Tokens of a lease not spent when its window ends were
 * never counted; a refill (the compare-and-set of the exact state) by this process's next
 * write to that item adds them back to the bucket, never above the capacity (a same-second
 * write, made when another process refilled, cannot: they are lost to that second). So, per
 * process and account:
 *
 * - the count never exceeds the requests admitted (no request invented), and is short of them
 *   by exactly the lease's spent tokens not counted yet, ≤ LEASE_MAX − 1 = 9 (one lease at a
 *   time, and every new lease is a write that counts what the last one admitted): counted by
 *   the next write of that account in this process, on the next day's item if the day turned
 *   (so a day's count can be off by ≤ 9 per container at midnight, the total is not), or, if
 *   the container ends first, by the write its SIGTERM handler makes (`flushUncounted`, one
 *   UpdateItem per account: lib/core/shutdown.ts says when Lambda sends it); lost only when the
 *   container is killed without one (a crash, a timeout, memory exhausted, SIGKILL past the
 *   500 ms: docs/cost.md, "A container's end");
 * - tokens held back from other processes: ≤ k − 1 ≤ 9 for at most LEASE_WINDOW seconds, ≤ 10 %
 *   of a second's refill; so 429s can come earlier than the rate by at most that per container;
 * - the bucket never admits more than it was given: every token is taken from the item before
 *   it is spent, and only tokens never spent are given back. Over any interval, what the
 *   containers admit exceeds what the bucket alone would (its tokens at the start plus the
 *   refill) by at most the tokens they held at its start: ≤ k − 1 ≤ 9 per container.
 */
export const LEASE_MAX = 10;
/** Seconds a lease is spent in, and over which the admissions that size the next one are counted. */
export const LEASE_WINDOW = 4;

interface Lease {
  readonly sec: number;
  left: number;
  readonly memoKey: string;
  readonly state: State;
  readonly shards: number;
}
/** Admissions of this process per second, the last LEASE_WINDOW seconds (index: second modulo LEASE_WINDOW). */
interface Rate {
  readonly secs: number[];
  readonly counts: number[];
}
const leases = new Map<string, Lease>();
const rates = new Map<string, Rate>();
/** Tokens of expired leases not given back yet, per bucket item (memo key). */
const unspent = new Map<string, number>();
/** Requests admitted from leases and not counted yet, per account and bucket (`pk|attr`: any day, any shard). */
const uncounted = new Map<string, number>();
const countKeyOf = (ref: BucketRef) => `${ref.key.pk}|${ref.attr}`;
/** Where `flushUncounted` writes an account's uncounted requests: the item and tenant scope of its last admission from a lease. */
interface CountTarget {
  readonly key: BucketRef['key'];
  readonly ttlSeconds: number;
  readonly tenantId: string | undefined;
}
const countTargets = new Map<string, CountTarget>();
/** The shard this process last leased from, per bucket. */
const stickyShard = new Map<string, number>();
const bounded = <V>(m: Map<string, V>, k: string, v: V) => {
  if (m.size >= MEMO_MAX && !m.has(k)) m.delete(m.keys().next().value as string);
  m.set(k, v);
};

/** Counts an admission of this process in second `sec` (the admissions the next lease is sized by). */
function observe(refKey: string, sec: number): void {
  let r = rates.get(refKey);
  if (!r) {
    r = { secs: new Array<number>(LEASE_WINDOW).fill(-1), counts: new Array<number>(LEASE_WINDOW).fill(0) };
    bounded(rates, refKey, r);
  }
  const i = sec % LEASE_WINDOW;
  if (r.secs[i] !== sec) {
    r.secs[i] = sec;
    r.counts[i] = 0;
  }
  r.counts[i]! += 1;
}

/** The tokens one write takes, given this process's admissions of the last LEASE_WINDOW seconds (this one included). */
export function leaseSize(admittedInWindow: number, capacityPerMinute: number | undefined): number {
  if (capacityPerMinute === undefined) return 1;
  return Math.max(1, Math.min(LEASE_MAX, 2 * admittedInWindow, Math.floor(capacityPerMinute / 600)));
}

function admittedInWindow(refKey: string, sec: number): number {
  const r = rates.get(refKey);
  if (!r) return 0;
  let n = 0;
  for (let i = 0; i < LEASE_WINDOW; i++) if (r.secs[i]! > sec - LEASE_WINDOW && r.secs[i]! <= sec) n += r.counts[i]!;
  return n;
}

/**
 * What the process holds of a bucket (tests and docs/cost.md): the live lease's tokens, those
 * not given back, and the requests admitted from leases and not counted yet.
 */
export function held(ref: BucketRef): { lease: number; unspent: number; uncounted: number } {
  const l = leases.get(refKeyOf(ref));
  let u = 0;
  for (const [k, v] of unspent) if (k.startsWith(`${ref.key.pk}|`) && k.endsWith(`|${ref.attr}`)) u += v;
  return { lease: l?.left ?? 0, unspent: u, uncounted: uncounted.get(countKeyOf(ref)) ?? 0 };
}

const refKeyOf = (ref: BucketRef) => `${ref.key.pk}|${ref.key.sk}|${ref.attr}`;

/**
 * Takes one token. `capacity` is the current limit (per minute); when it is not known yet
 * (the tenant is still being read) the stored capacity is used, else it is awaited.
 */
export async function take(ref: BucketRef, capacity: Capacity, nowMs: () => number = Date.now): Promise<Decision> {
  const refKey = refKeyOf(ref);
  const sec = Math.floor(nowMs() / 1000);
  const lease = leases.get(refKey);
  if (lease) {
    if (sec - lease.sec < LEASE_WINDOW && sec >= lease.sec && lease.left >= 1) {
      lease.left--;
      observe(refKey, sec);
      // admitted without a write: counted by this process's next write of the account
      if (ref.count) {
        const countKey = countKeyOf(ref);
        bounded(uncounted, countKey, (uncounted.get(countKey) ?? 0) + 1);
        bounded(countTargets, countKey, { key: ref.key, ttlSeconds: ref.ttlSeconds, tenantId: currentScope()?.tenantId });
      }
      return decision(ref.policy, true, { ...lease.state, tok: round(lease.state.tok + lease.left) }, lease.shards);
    }
    // the lease's window is over: what is left of it is given back with the next write to its item
    leases.delete(refKey);
    if (lease.left > 0) bounded(unspent, lease.memoKey, (unspent.get(lease.memoKey) ?? 0) + lease.left);
  }
  const shards = Math.max(1, Math.floor(ref.shards ?? 1));
  const want = leaseSize(admittedInWindow(refKey, sec), capacity.known === undefined ? undefined : capacity.known / shards);
  const done = (d: Taken, shard: number) => {
    if (d.decision.allowed) {
      observe(refKey, sec);
      if (d.granted > 1) {
        bounded(leases, refKey, { sec, left: d.granted - 1, memoKey: d.memoKey, state: d.state, shards });
        bounded(stickyShard, refKey, shard);
      }
    }
    return d.decision;
  };
  if (shards === 1 || !ref.keyOf) return done(await takeShard(ref, ref.key, 1, capacity, want, nowMs), 0);
  const share: Capacity = {
    ...(capacity.known !== undefined ? { known: capacity.known / shards } : {}),
    promise: capacity.promise.then((c) => c / shards),
  };
  // a leasing process stays on the shard it leased from (its give-back lands there); else one at random
  const sticky = want > 1 ? stickyShard.get(refKey) : undefined;
  const first = sticky !== undefined && sticky < shards ? sticky : randomInt(shards);
  const d = await takeShard(ref, ref.keyOf(first), shards, share, want, nowMs);
  if (d.decision.allowed) return done(d, first);
  // that shard is empty: one other before refusing
  const second = (first + 1 + randomInt(shards - 1)) % shards;
  return done(await takeShard(ref, ref.keyOf(second), shards, share, want, nowMs), second);
}

interface Taken {
  readonly decision: Decision;
  /** Tokens taken by the write (1 + the lease), 0 when refused. */
  readonly granted: number;
  readonly state: State;
  readonly memoKey: string;
}

async function takeShard(ref: BucketRef, key: BucketRef['key'], shards: number, capacity: Capacity, want: number, nowMs: () => number): Promise<Taken> {
  const memoKey = `${key.pk}|${key.sk}|${ref.attr}`;
  const names = { '#ts': `${ref.attr}ts`, '#tok': `${ref.attr}tok`, '#cap': `${ref.attr}cap`, '#ttl': 'ttl' };
  const ttl = Math.floor(nowMs() / 1000) + ref.ttlSeconds;
  // tokens of this process's expired leases on this item, given back to the bucket by a refill
  const back = unspent.get(memoKey) ?? 0;
  const counting = ref.count ? ' ADD requests :counted' : '';
  // this request and those admitted from leases since this process's last write of the account,
  // claimed by this write (a take running beside it in this process does not count them too)
  // and put back unless it admits
  const countKey = countKeyOf(ref);
  const pending = ref.count ? (uncounted.get(countKey) ?? 0) : 0;
  if (pending > 0) uncounted.delete(countKey);
  let flushed = false;
  const counted = ref.count ? { counted: 1 + pending } : {};
  const refused = (s: State): Taken => ({ decision: decision(ref.policy, false, s, shards), granted: 0, state: s, memoKey });
  const admitted = (s: State, n: number): Taken => {
    if (back > 0) unspent.delete(memoKey);
    flushed = true;
    remember(memoKey, s);
    // the caller sees the tokens left with the lease this process now holds
    return { decision: decision(ref.policy, true, { ...s, tok: round(s.tok + n - 1) }, shards), granted: n, state: s, memoKey };
  };
  try {
    let state = memo.get(memoKey);
    let known = false; // whether `state` came from the item itself (not this process's memory)
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const now = Math.floor(nowMs() / 1000);
      try {
        if (state && state.ts >= now) {
          if (state.tok < 1 && known) return refused(state);
          const n = Math.max(1, Math.min(want, Math.floor(state.tok)));
          const out = await takeTokens(key, names, counting, { n, ts: state.ts, ttl, ...counted });
          return admitted(stateOf(out.Attributes, ref.attr) ?? { ...state, tok: round(state.tok - n) }, n);
        }
        // a refill (once a second per bucket and process) waits for the current limit, read in parallel
        const cap = capacity.known ?? (await capacity.promise);
        const rate = cap / 60;
        const ts = Math.max(now, state?.ts ?? 0);
        // a refill from the exact state (the compare-and-set below) also takes back the unspent tokens
        const tokens = state ? round(Math.min(cap, state.tok + (ts - state.ts) * rate + back)) : cap;
        if (tokens < 1) {
          if (known) return refused({ ts, tok: tokens, cap });
          // remembered as empty: verify against the item (this create-path write fails and returns it)
          state = undefined;
          continue;
        }
        const n = Math.max(1, Math.min(want, Math.floor(tokens)));
        const next: State = { ts, tok: round(tokens - n), cap };
        // (the create path gives no tokens back: its item is new and full; the requests pending are counted on it)
        await refill(key, names, counting, { ts: next.ts, tok: next.tok, cap, ttl, ...counted }, state);
        return admitted(next, n);
      } catch (error) {
        if (CONTENDED.has((error as Error).name)) break;
        const refusal = refusedItem(error);
        if (!refusal) throw error;
        // ALL_OLD of a failed condition comes back unconverted: {attr: {N: "..."}}
        const raw = refusal.item;
        state = stateOf(raw && Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, v.N !== undefined ? Number(v.N) : v])), ref.attr);
        known = true;
      }
    }
    // contended: refused, never admitted unchecked (the caller retries after a second)
    logger.warn('rate limit bucket: contended, refused', { policy: ref.policy, attempts: MAX_ATTEMPTS });
    const cap = capacity.known ?? state?.cap ?? (await capacity.promise);
    const decided: Decision = { allowed: false, policy: ref.policy, limit: round(cap * shards), remaining: 0, resetSeconds: 1 };
    return { decision: decided, granted: 0, state: state ?? { ts: 0, tok: 0, cap }, memoKey };
  } finally {
    if (pending > 0 && !flushed) bounded(uncounted, countKey, (uncounted.get(countKey) ?? 0) + pending);
  }
}

/**
 * Writes every account's requests admitted from leases and not counted yet: one UpdateItem
 * (`ADD requests n`) per account, all at once, each on the item and with the tenant's
 * credentials of that account's last admission (the tenant session a tenant route's role
 * needs for `METER#<tid>`). Run at the container's end (SIGTERM, below); a write that fails
 * puts its count back. Resolves with the requests written.
 */
export async function flushUncounted(nowMs: () => number = Date.now): Promise<number> {
  const ttlBase = Math.floor(nowMs() / 1000);
  const writes = [...uncounted].flatMap(([countKey, n]) => {
    const target = countTargets.get(countKey);
    if (!(n > 0) || !target) return [];
    uncounted.delete(countKey);
    const write = () => addCount(target.key, n, ttlBase + target.ttlSeconds);
    return [
      (target.tenantId === undefined ? write() : withTenant(target.tenantId, write)).then(
        () => n,
        (error: unknown) => {
          bounded(uncounted, countKey, (uncounted.get(countKey) ?? 0) + n);
          throw error;
        },
      ),
    ];
  });
  const results = await Promise.allSettled(writes);
  const failed = results.filter((r) => r.status === 'rejected');
  if (failed.length > 0) logger.warn('rate limit meter: uncounted requests not written', { accounts: failed.length, error: failed[0]!.reason as Error });
  return results.reduce((sum, r) => sum + (r.status === 'fulfilled' ? r.value : 0), 0);
}

// Lambda ends a container with SIGTERM once an extension is registered (lib/core/shutdown.ts):
// registered here, at module load, and awaited so that it completes within Init
await onShutdown('rate-limit meter', () => flushUncounted());

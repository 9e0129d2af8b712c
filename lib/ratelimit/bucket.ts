import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { randomInt } from 'node:crypto';
import { logger } from '../core/logger.js';
import { db, tableName } from '../store/client.js';

/**
 * A token bucket in one table item, taken with conditional UpdateItems (no read first).
 *
 * State: `ts` (the second the bucket was last refilled), `tok` (tokens left), `cap`
 * (capacity, = the per-minute limit; refill rate cap/60 per second). Refill happens once
 * per second:
 *
 * - fast path, the same second: `SET tok = tok - 1` if `ts = <that second> AND tok >= 1`:
 *   one write, the common case for a busy caller;
 * - refill path, a new second: the new state is computed from the last known state
 *   (remembered from the previous call in this process, or returned by a failed condition
 *   as ALL_OLD) and written if the item still holds exactly that state (compare-and-set);
 *   a lost race re-reads from the condition failure and tries again.
 *
 * So a request costs one conditional write in the common case (the usage meter's ADD rides
 * on the same write), two when another process refilled the bucket first. A refused take
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
 * Takes one token. `capacity` is the current limit (per minute); when it is not known yet
 * (the tenant is still being read) the stored capacity is used, else it is awaited.
 */
export async function take(ref: BucketRef, capacity: Capacity, nowMs: () => number = Date.now): Promise<Decision> {
  const shards = Math.max(1, Math.floor(ref.shards ?? 1));
  if (shards === 1 || !ref.keyOf) return takeShard(ref, ref.key, 1, capacity, nowMs);
  const share: Capacity = {
    ...(capacity.known !== undefined ? { known: capacity.known / shards } : {}),
    promise: capacity.promise.then((c) => c / shards),
  };
  const first = randomInt(shards);
  const d = await takeShard(ref, ref.keyOf(first), shards, share, nowMs);
  if (d.allowed) return d;
  // that shard is empty: one other before refusing
  const second = (first + 1 + randomInt(shards - 1)) % shards;
  return takeShard(ref, ref.keyOf(second), shards, share, nowMs);
}

async function takeShard(ref: BucketRef, key: BucketRef['key'], shards: number, capacity: Capacity, nowMs: () => number): Promise<Decision> {
  const memoKey = `${key.pk}|${key.sk}|${ref.attr}`;
  const names = { '#ts': `${ref.attr}ts`, '#tok': `${ref.attr}tok`, '#cap': `${ref.attr}cap`, '#ttl': 'ttl' };
  const ttl = Math.floor(nowMs() / 1000) + ref.ttlSeconds;
  const counting = ref.count ? ' ADD requests :one' : '';
  let state = memo.get(memoKey);
  let known = false; // whether `state` came from the item itself (not this process's memory)
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const now = Math.floor(nowMs() / 1000);
    try {
      if (state && state.ts >= now) {
        if (state.tok < 1 && known) return decision(ref.policy, false, state, shards);
        const out = await db().send(
          new UpdateCommand({
            TableName: tableName(),
            Key: key,
            UpdateExpression: `SET #tok = #tok - :one, #ttl = if_not_exists(#ttl, :ttl)${counting}`,
            ConditionExpression: '#ts = :ts AND #tok >= :one',
            ExpressionAttributeNames: { '#ts': names['#ts'], '#tok': names['#tok'], '#ttl': names['#ttl'] },
            ExpressionAttributeValues: { ':one': 1, ':ts': state.ts, ':ttl': ttl },
            ReturnValues: 'ALL_NEW',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        const next = stateOf(out.Attributes, ref.attr) ?? { ...state, tok: state.tok - 1 };
        remember(memoKey, next);
        return decision(ref.policy, true, next, shards);
      }
      // a refill (once a second per bucket and process) waits for the current limit, read in parallel
      const cap = capacity.known ?? (await capacity.promise);
      const rate = cap / 60;
      const ts = Math.max(now, state?.ts ?? 0);
      const tokens = state ? round(Math.min(cap, state.tok + (ts - state.ts) * rate)) : cap;
      if (tokens < 1) {
        if (known) return decision(ref.policy, false, { ts, tok: tokens, cap }, shards);
        // remembered as empty: verify against the item (this create-path write fails and returns it)
        state = undefined;
        continue;
      }
      const next: State = { ts, tok: round(tokens - 1), cap };
      await db().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: key,
          UpdateExpression: `SET #ts = :ts, #tok = :tok, #cap = :cap, #ttl = if_not_exists(#ttl, :ttl)${counting}`,
          ConditionExpression: state ? '#ts = :oldts AND #tok = :oldtok' : 'attribute_not_exists(#ts)',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: {
            ':ts': next.ts, ':tok': next.tok, ':cap': cap, ':ttl': ttl,
            ...(ref.count ? { ':one': 1 } : {}),
            ...(state ? { ':oldts': state.ts, ':oldtok': state.tok } : {}),
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      remember(memoKey, next);
      return decision(ref.policy, true, next, shards);
    } catch (error) {
      if (CONTENDED.has((error as Error).name)) break;
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      // ALL_OLD of a failed condition comes back unconverted: {attr: {N: "..."}}
      const raw = error.Item as Record<string, { N?: string }> | undefined;
      state = stateOf(raw && Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, v.N !== undefined ? Number(v.N) : v])), ref.attr);
      known = true;
    }
  }
  // contended: refused, never admitted unchecked (the caller retries after a second)
  logger.warn('rate limit bucket: contended, refused', { policy: ref.policy, attempts: MAX_ATTEMPTS });
  const cap = capacity.known ?? state?.cap ?? (await capacity.promise);
  return { allowed: false, policy: ref.policy, limit: round(cap * shards), remaining: 0, resetSeconds: 1 };
}

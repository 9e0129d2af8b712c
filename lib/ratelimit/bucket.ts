import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
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
 * limit just read, so a changed quota applies from the next second.
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
}

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

function decision(policy: string, allowed: boolean, s: State): Decision {
  const rate = s.cap / 60;
  const reset = allowed ? (s.cap - s.tok) / rate : (1 - s.tok) / rate;
  return { allowed, policy, limit: s.cap, remaining: Math.max(0, Math.floor(s.tok)), resetSeconds: Math.max(allowed ? 0 : 1, Math.ceil(reset)) };
}

function stateOf(item: Record<string, unknown> | undefined, attr: string): State | undefined {
  if (!item || typeof item[`${attr}ts`] !== 'number') return undefined;
  return { ts: item[`${attr}ts`] as number, tok: item[`${attr}tok`] as number, cap: item[`${attr}cap`] as number };
}

/**
 * Takes one token. `capacity` is the current limit (per minute); when it is not known yet
 * (the tenant is still being read) the stored capacity is used, else it is awaited.
 */
export async function take(ref: BucketRef, capacity: { known?: number; promise: Promise<number> }, nowMs: () => number = Date.now): Promise<Decision> {
  const memoKey = `${ref.key.pk}|${ref.key.sk}|${ref.attr}`;
  const names = { '#ts': `${ref.attr}ts`, '#tok': `${ref.attr}tok`, '#cap': `${ref.attr}cap`, '#ttl': 'ttl' };
  const ttl = Math.floor(nowMs() / 1000) + ref.ttlSeconds;
  const counting = ref.count ? ' ADD requests :one' : '';
  let state = memo.get(memoKey);
  let known = false; // whether `state` came from the item itself (not this process's memory)
  for (let attempt = 0; attempt < 6; attempt++) {
    const now = Math.floor(nowMs() / 1000);
    try {
      if (state && state.ts >= now) {
        if (state.tok < 1 && known) return decision(ref.policy, false, state);
        const out = await db().send(
          new UpdateCommand({
            TableName: tableName(),
            Key: ref.key,
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
        return decision(ref.policy, true, next);
      }
      // a refill (once a second per bucket and process) waits for the current limit, read in parallel
      const cap = capacity.known ?? (await capacity.promise);
      const rate = cap / 60;
      const ts = Math.max(now, state?.ts ?? 0);
      const tokens = state ? round(Math.min(cap, state.tok + (ts - state.ts) * rate)) : cap;
      if (tokens < 1) {
        if (known) return decision(ref.policy, false, { ts, tok: tokens, cap });
        // remembered as empty: verify against the item (this create-path write fails and returns it)
        state = undefined;
        continue;
      }
      const next: State = { ts, tok: round(tokens - 1), cap };
      await db().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: ref.key,
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
      return decision(ref.policy, true, next);
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      // ALL_OLD of a failed condition comes back unconverted: {attr: {N: "..."}}
      const raw = error.Item as Record<string, { N?: string }> | undefined;
      state = stateOf(raw && Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, v.N !== undefined ? Number(v.N) : v])), ref.attr);
      known = true;
    }
  }
  throw new Error('rate limit bucket: too much contention');
}

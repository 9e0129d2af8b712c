import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import * as z from 'zod/v4';
import type { CallContext } from '../../auth/principal.js';
import { ADMIN_SCOPE } from '../../auth/scopes.js';
import type { Change } from '../../audit/audit.js';
import { open, seal, type SealScope } from '../../crypto/envelope.js';
import { commitChange, putAt, putNew, readItem } from '../../resources/items.js';
import { badRequest, conflict, forbidden, notFound } from '../../core/errors.js';
import { newId } from '../../ids.js';
import { entity, nullable } from '../../store/entity.js';
import { keys } from '../../store/keys.js';
import { actorName } from '../../resources/store.js';
import { tableName } from '../../store/client.js';
import type { TxItem } from '../../store/tx.js';
import { combineShares, splitSecret } from '../escrow/shamir.js';
import type { SealBody, TimelockBody } from './schemas.js';

/**
 * Time-locked values. The value is sealed (AAD: tenant, `timelock`, id) until `release_at`;
 * before it a GET shows the metadata and the seconds left, after it the value (each read
 * audited, the first one announced as `timelock.released`).
 *
 * Break-glass (optional, chosen at creation): a `request_release` starts a delay; the value
 * opens when it ends unless the request was vetoed meanwhile. The request is announced by
 * webhook (`timelock.break_glass_requested`) so the people who can veto hear of it: an
 * account admin (`admin:*`), or whoever holds enough of the time-lock's veto shares (Shamir
 * shares of a random veto key returned once at creation; only the key's SHA-256 is kept). A
 * vetoed time-lock never releases early: no further request is accepted, and it opens only
 * at `release_at`. Every state change is one write conditional on the version read.
 */
const TYPE = 'timelock';

const BreakGlass = z.object({
  delay_seconds: z.number().int(),
  veto_key_hash: nullable(z.string()),
  veto_threshold: nullable(z.number().int()),
  status: z.enum(['armed', 'pending', 'vetoed']),
  requested_at: nullable(z.string()),
  requested_by: nullable(z.string()),
  reason: nullable(z.string()),
  release_after: nullable(z.string()),
  vetoed_at: nullable(z.string()),
  vetoed_by: nullable(z.string()),
  veto_reason: nullable(z.string()),
});

const TimelockItem = entity(
  'time-lock',
  z.object({
    id: z.string(),
    name: z.string(),
    release_at: z.string(),
    break_glass: nullable(BreakGlass),
    released_at: nullable(z.string()),
    reads: z.number().int().default(0),
    version: z.number().int().positive(),
    created_at: z.string(),
    updated_at: z.string(),
    created_by: nullable(z.string()),
  }),
);
type Stored = ReturnType<typeof TimelockItem.parse>;

const scope = (tenantId: string, id: string): SealScope => ({ tenantId, type: TYPE, id, version: 1 });
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** When the value opens, as of `now`: the release time, or an unvetoed break-glass delay's end if earlier. */
export function timelockState(s: Pick<Stored, 'release_at' | 'break_glass'>, now: Date) {
  const bg = s.break_glass;
  const early = bg?.status === 'pending' && bg.release_after !== null && bg.release_after < s.release_at ? bg.release_after : null;
  const opensAt = early ?? s.release_at;
  const left = Math.max(0, Math.ceil((Date.parse(opensAt) - now.getTime()) / 1000));
  return { released: left === 0, opens_at: opensAt, seconds_left: left, by: early && left === 0 ? 'break_glass' : 'time' } as const;
}

const view = (s: Stored, now: Date) => {
  const st = timelockState(s, now);
  const bg = s.break_glass;
  return {
    id: s.id,
    name: s.name,
    release_at: s.release_at,
    released: st.released,
    released_by: st.released ? st.by : null,
    opens_at: st.opens_at,
    seconds_left: st.seconds_left,
    break_glass: bg
      ? {
          delay_seconds: bg.delay_seconds,
          status: bg.status,
          veto_threshold: bg.veto_threshold,
          requested_at: bg.requested_at,
          requested_by: bg.requested_by,
          reason: bg.reason,
          release_after: bg.release_after,
          vetoed_at: bg.vetoed_at,
          vetoed_by: bg.vetoed_by,
          veto_reason: bg.veto_reason,
        }
      : null,
    version: s.version,
    created_at: s.created_at,
    updated_at: s.updated_at,
    created_by: s.created_by,
  };
};

const change = (
  verb: 'created' | 'released' | 'break_glass_requested' | 'break_glass_vetoed',
  s: Stored,
  extra: Record<string, unknown> = {},
): Change => ({
  action: `timelock.${verb}`,
  resource: { type: TYPE, id: s.id, name: s.name },
  event: { type: `timelock.${verb}`, data: { id: s.id, name: s.name, release_at: s.release_at, ...extra } },
});

async function found(ctx: CallContext, id: string): Promise<{ stored: Stored; sealed: Uint8Array }> {
  const item = await readItem(keys.timelock(ctx.principal.tenantId, id));
  if (!item) throw notFound('time-lock');
  return { stored: TimelockItem.parse(item), sealed: item.value as Uint8Array };
}

const MAX_LOCK_MS = 10 * 366 * 86400 * 1000;

async function create(ctx: CallContext, body: SealBody, now: Date) {
  const release = Date.parse(body.release_at);
  if (release <= now.getTime() || release - now.getTime() > MAX_LOCK_MS) {
    throw badRequest('release_at must be in the future and within 10 years', [{ path: 'body.release_at', message: 'out of range' }]);
  }
  const id = newId();
  const at = now.toISOString();
  let vetoShares: string[] | null = null;
  let vetoHash: string | null = null;
  if (body.break_glass?.veto_shares) {
    const vetoKey = randomBytes(32);
    const out = await splitSecret(
      vetoKey,
      body.break_glass.veto_shares.shares,
      body.break_glass.veto_shares.threshold,
      randomBytes(8).toString('hex'),
    );
    vetoShares = out.shares;
    vetoHash = sha256(vetoKey);
  }
  const stored: Stored = {
    id,
    name: body.name,
    release_at: new Date(release).toISOString(),
    break_glass: body.break_glass
      ? {
          delay_seconds: body.break_glass.delay_seconds,
          veto_key_hash: vetoHash,
          veto_threshold: body.break_glass.veto_shares?.threshold ?? null,
          status: 'armed',
          requested_at: null,
          requested_by: null,
          reason: null,
          release_after: null,
          vetoed_at: null,
          vetoed_by: null,
          veto_reason: null,
        }
      : null,
    released_at: null,
    reads: 0,
    version: 1,
    created_at: at,
    updated_at: at,
    created_by: actorName(ctx),
  };
  const value = await seal(scope(ctx.principal.tenantId, id), body.value);
  await commitChange(ctx, [putNew(keys.timelock(ctx.principal.tenantId, id), { ...stored, value })], change('created', stored));
  return { timelock: view(stored, now), ...(vetoShares ? { veto_shares: vetoShares } : {}) };
}

async function write(ctx: CallContext, current: Stored, sealed: Uint8Array, next: Stored, c: Change) {
  await commitChange(ctx, [putAt(keys.timelock(ctx.principal.tenantId, current.id), { ...next, value: sealed }, current.version)], c);
}

async function requestRelease(ctx: CallContext, id: string, reason: string, now: Date) {
  const { stored, sealed } = await found(ctx, id);
  const bg = stored.break_glass;
  if (!bg) throw badRequest('this time-lock was created without break-glass', [{ path: 'body.id', message: 'no break-glass' }]);
  if (timelockState(stored, now).released) throw conflict('the time-lock is already released');
  if (bg.status === 'vetoed') throw conflict('a break-glass request of this time-lock was vetoed: it opens only at its release time');
  if (bg.status === 'pending') throw conflict(`a break-glass request is already pending until ${bg.release_after}`);
  const releaseAfter = new Date(now.getTime() + bg.delay_seconds * 1000).toISOString();
  const next: Stored = {
    ...stored,
    break_glass: { ...bg, status: 'pending', requested_at: now.toISOString(), requested_by: actorName(ctx), reason, release_after: releaseAfter },
    version: stored.version + 1,
    updated_at: now.toISOString(),
  };
  await write(ctx, stored, sealed, next, change('break_glass_requested', next, { break_glass_release_at: releaseAfter, reason }));
  return { timelock: view(next, now) };
}

async function veto(ctx: CallContext, id: string, reason: string, shares: readonly string[] | undefined, now: Date) {
  const { stored, sealed } = await found(ctx, id);
  const bg = stored.break_glass;
  if (!bg || bg.status !== 'pending') throw conflict('no break-glass request of this time-lock is pending');
  if (timelockState(stored, now).released) throw conflict('the break-glass delay has passed: the time-lock is released');
  if (shares) {
    if (!bg.veto_key_hash)
      throw badRequest('this time-lock has no veto shares: an account admin vetoes it', [{ path: 'body.shares', message: 'no veto shares' }]);
    const key = await combineShares(shares);
    if (!timingSafeEqual(Buffer.from(sha256(key.secret), 'hex'), Buffer.from(bg.veto_key_hash, 'hex'))) {
      throw forbidden('these are not veto shares of this time-lock');
    }
  } else if (!ctx.principal.scopes.includes(ADMIN_SCOPE)) {
    throw forbidden('a veto needs admin:* or the time-lock\u2019s veto shares', 'insufficient_scope');
  }
  const next: Stored = {
    ...stored,
    break_glass: { ...bg, status: 'vetoed', vetoed_at: now.toISOString(), vetoed_by: actorName(ctx), veto_reason: reason },
    version: stored.version + 1,
    updated_at: now.toISOString(),
  };
  await write(ctx, stored, sealed, next, change('break_glass_vetoed', next, { reason, by: shares ? 'veto_shares' : 'admin' }));
  return { timelock: view(next, now) };
}

export async function timelockAction(ctx: CallContext, body: TimelockBody, now = new Date()) {
  if (body.action === 'seal') return { status: 201 as const, data: await create(ctx, body, now) };
  if (body.action === 'request_release') return { status: 200 as const, data: await requestRelease(ctx, body.id, body.reason, now) };
  return { status: 200 as const, data: await veto(ctx, body.id, body.reason, body.shares, now) };
}

/** Metadata and the time left before the release; the value (audited) after it. */
export async function readTimelock(ctx: CallContext, id: string, now = new Date()) {
  const { stored, sealed } = await found(ctx, id);
  const st = timelockState(stored, now);
  if (!st.released) return { timelock: view(stored, now), value: null };
  const value = (await open(scope(ctx.principal.tenantId, id), sealed)).toString('utf8');
  // reads after the release only count (no version condition: concurrent reads all succeed)
  const first = stored.released_at === null;
  const next: Stored = { ...stored, released_at: stored.released_at ?? now.toISOString(), reads: stored.reads + 1 };
  const count: TxItem = {
    Update: {
      TableName: tableName(),
      Key: keys.timelock(ctx.principal.tenantId, id),
      UpdateExpression: 'SET #reads = if_not_exists(#reads, :zero) + :one, released_at = :at',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: { '#reads': 'reads' },
      ExpressionAttributeValues: { ':zero': 0, ':one': 1, ':at': next.released_at },
    },
  };
  const c = change('released', next, { released_by: st.by });
  await commitChange(ctx, [count], first ? c : { action: 'timelock.read', resource: c.resource, detail: { reads: next.reads } }, () =>
    notFound('time-lock'),
  );
  return { timelock: view(next, now), value };
}

import { randomInt } from 'node:crypto';
import * as z from 'zod/v4';
import type { CallContext } from '../../auth/principal.js';
import { recordAudit, type Change } from '../../audit/audit.js';
import { open, seal, type SealScope } from '../../crypto/envelope.js';
import { commitChange, deleteAt, listItems, putNew, readItem } from '../../resources/items.js';
import { badRequest, conflict, notFound } from '../../core/errors.js';
import { newId, nowIso } from '../../ids.js';
import { entity, nullable } from '../../store/entity.js';
import { keys } from '../../store/keys.js';
import { actorName } from '../../resources/store.js';
import type { TxItem } from '../../store/tx.js';
import { tableName } from '../../store/client.js';
import { challenge, generate, parseOtp, step } from './otp.js';
import type { CreateSkeyBody } from './schemas.js';

/**
 * S/KEY sequences (RFC 2289) as an S/KEY server keeps them: the seed, the algorithm, the
 * sequence number of the last accepted one-time password and that OTP itself, sealed (AAD:
 * tenant, `skey_otp`, id, version). The passphrase is never stored: it is used once at
 * creation to compute the OTP of the starting count (or the client sends that OTP itself).
 * A verification hashes the presented OTP once and compares it with the stored one; a
 * success stores the presented OTP and lowers the sequence with a write conditional on the
 * version read, so of N concurrent verifications of one OTP exactly one succeeds.
 */
const TYPE = 'skey_otp';

const SkeyItem = entity(
  'S/KEY sequence',
  z.object({
    id: z.string(),
    name: z.string(),
    algorithm: z.enum(['md5', 'sha1']),
    seed: z.string(),
    sequence: z.number().int().min(0),
    initial_sequence: z.number().int().min(1),
    version: z.number().int().positive(),
    created_at: z.string(),
    updated_at: z.string(),
    last_verified_at: nullable(z.string()),
    created_by: nullable(z.string()),
  }),
);
type Stored = ReturnType<typeof SkeyItem.parse>;
const LIST_FIELDS = SkeyItem.fields;

/** The sequence as the API shows it: the next challenge, or none once exhausted. */
const view = (s: Stored) => ({
  ...s,
  exhausted: s.sequence === 0,
  remaining: s.sequence,
  challenge: s.sequence === 0 ? null : challenge(s.algorithm, s.sequence - 1, s.seed),
});

const scope = (tenantId: string, id: string, version: number): SealScope => ({ tenantId, type: TYPE, id, version });

const change = (verb: 'created' | 'deleted' | 'exhausted', s: Stored, action = `skey_otp.${verb}`): Change => ({
  action,
  resource: { type: TYPE, id: s.id, name: s.name },
  event: { type: `skey.${verb}`, data: { id: s.id, name: s.name, algorithm: s.algorithm, sequence: s.sequence } },
});

async function found(ctx: CallContext, id: string): Promise<{ stored: Stored; sealed: Uint8Array }> {
  const item = await readItem(keys.skey(ctx.principal.tenantId, id));
  if (!item) throw notFound('S/KEY sequence');
  return { stored: SkeyItem.parse(item), sealed: item.value as Uint8Array };
}

/** A seed as RFC 2289 suggests: two letters and digits (here 2 + 8, lower case). */
const newSeed = () => `${String.fromCharCode(97 + randomInt(26), 97 + randomInt(26))}${String(randomInt(1e8)).padStart(8, '0')}`;

export async function createSkey(ctx: CallContext, body: CreateSkeyBody) {
  const seed = body.seed ?? newSeed();
  let initial: Buffer;
  if (body.passphrase !== undefined) {
    initial = generate(body.algorithm, seed, body.passphrase, body.count);
  } else {
    const parsed = parseOtp(body.initial_otp!);
    if (!parsed) {
      throw badRequest('initial_otp is neither 16 hex digits nor six words of the RFC 2289 dictionary with a valid checksum', [
        { path: 'body.initial_otp', message: 'not an OTP' },
      ]);
    }
    initial = parsed;
  }
  const id = newId();
  const at = nowIso();
  const stored: Stored = {
    id,
    name: body.name,
    algorithm: body.algorithm,
    seed,
    sequence: body.count,
    initial_sequence: body.count,
    version: 1,
    created_at: at,
    updated_at: at,
    last_verified_at: null,
    created_by: actorName(ctx),
  };
  const value = await seal(scope(ctx.principal.tenantId, id, 1), initial);
  await commitChange(ctx, [putNew(keys.skey(ctx.principal.tenantId, id), { ...stored, value })], change('created', stored));
  return view(stored);
}

export async function getSkey(ctx: CallContext, id: string) {
  return view((await found(ctx, id)).stored);
}

export async function listSkeys(ctx: CallContext, page: { limit: number; offset: number; cursor?: string | undefined }) {
  const out = await listItems(ctx.principal.tenantId, keys.skeyPrefix, page, LIST_FIELDS);
  return { items: out.items.map((i) => view(SkeyItem.parse(i))), nextCursor: out.nextCursor };
}

export async function deleteSkey(ctx: CallContext, id: string) {
  const { stored } = await found(ctx, id);
  await commitChange(ctx, [deleteAt(keys.skey(ctx.principal.tenantId, id), stored.version)], change('deleted', stored), () =>
    notFound('S/KEY sequence'),
  );
  return { id: stored.id, name: stored.name };
}

/**
 * Verifies the OTP of the current challenge (hex or six words). Success: the presented OTP
 * becomes the stored one and the sequence drops by one, conditional on the version read (a
 * concurrent success of the same OTP makes this one a 409 `otp_replayed`).
 */
export async function verifySkey(ctx: CallContext, id: string, otpText: string) {
  const { stored, sealed } = await found(ctx, id);
  const resource = { type: TYPE, id: stored.id, name: stored.name };
  const presented = parseOtp(otpText);
  if (!presented) {
    throw badRequest('otp is neither 16 hex digits nor six words of the RFC 2289 dictionary with a valid checksum', [
      { path: 'body.otp', message: 'not an OTP' },
    ]);
  }
  if (stored.sequence === 0) throw conflict('this S/KEY sequence is exhausted: create a new one', 'skey_exhausted');
  const last = await open(scope(ctx.principal.tenantId, id, stored.version), sealed);
  if (!step(stored.algorithm, presented).equals(last)) {
    await recordAudit(ctx, ctx.principal.tenantId, {
      action: 'skey_otp.verify',
      resource,
      outcome: 'denied',
      detail: { sequence: stored.sequence - 1 },
    });
    throw badRequest(
      `the one-time password does not answer the challenge ${challenge(stored.algorithm, stored.sequence - 1, stored.seed)}`,
      undefined,
      'otp_invalid',
    );
  }
  const next: Stored = { ...stored, sequence: stored.sequence - 1, version: stored.version + 1, updated_at: nowIso(), last_verified_at: nowIso() };
  const value = await seal(scope(ctx.principal.tenantId, id, next.version), presented);
  const update: TxItem = {
    Update: {
      TableName: tableName(),
      Key: keys.skey(ctx.principal.tenantId, id),
      UpdateExpression: 'SET #v = :next, #seq = :seq, #val = :val, updated_at = :at, last_verified_at = :at',
      ConditionExpression: 'attribute_exists(pk) AND #v = :v',
      ExpressionAttributeNames: { '#v': 'version', '#seq': 'sequence', '#val': 'value' },
      ExpressionAttributeValues: { ':v': stored.version, ':next': next.version, ':seq': next.sequence, ':val': value, ':at': next.updated_at },
    },
  };
  // the last OTP of the sequence announces the exhaustion (a webhook can prompt a new sequence)
  const audit: Change = next.sequence === 0 ? change('exhausted', next, 'skey_otp.verify') : { action: 'skey_otp.verify', resource };
  await commitChange(ctx, [update], { ...audit, detail: { sequence: next.sequence } }, () =>
    conflict('this one-time password was just used by a concurrent verification', 'otp_replayed'),
  );
  return { verified: true, skey_otp: view(next) };
}

import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { api, canary, errorCode, newAccount, unique, type TestAccount } from '../helpers/api.js';
import { findLeaks } from '../helpers/leaks.js';

/**
 * POST /api/v1/intelligence/check-breach (lib/tools/breach.ts) against the local range
 * server of the runtime (scripts/local/tools.ts), which records every request it receives:
 * only the 5-character SHA-1 prefix may arrive there, never the password or its full hash.
 */
let acct: TestAccount;
let other: TestAccount;
let key: string;
const MISSING = '00000000-0000-7000-8000-000000000000';
const sha1 = (s: string) => createHash('sha1').update(s).digest('hex').toUpperCase();
const received = (): { url: string; headers: Record<string, string> }[] => {
  const file = join(inject('dataDir'), 'breach-range', 'requests.jsonl');
  return existsSync(file)
    ? readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
    : [];
};
const check = (body: unknown, k = key) => api('POST', '/api/v1/intelligence/check-breach', { key: k, body });

beforeAll(async () => {
  [acct, other] = await Promise.all([newAccount('breach'), newAccount('breach-other')]);
  key = await acct.key(['intelligence:read']);
});

describe('POST /api/v1/intelligence/check-breach', () => {
  it('finds a known-breached password; only the prefix reaches the range server, padded', async () => {
    const before = received().length;
    const res = await check({ password: 'P@ssw0rd' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ breached: true, count: 112_434, checked: 'password' });
    expect(res.text).not.toContain('P@ssw0rd');
    const got = received().slice(before);
    expect(got).toHaveLength(1);
    expect(got[0]!.url).toBe(`/range/${sha1('P@ssw0rd').slice(0, 5)}`);
    expect(got[0]!.headers['add-padding']).toBe('true');
    expect(JSON.stringify(got)).not.toContain(sha1('P@ssw0rd').slice(5));
  });

  it('a password that is not in the corpus is not breached (its range answer is padding only)', async () => {
    const pw = canary('breach-pw');
    const before = received().length;
    const res = await check({ password: pw });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ breached: false, count: 0 });
    const got = received().slice(before);
    expect(got.map((r) => r.url)).toEqual([`/range/${sha1(pw).slice(0, 5)}`]);
    expect(JSON.stringify(got)).not.toContain(pw);
  });

  it('checks a credential the caller can read, by id (the password never in the answer)', async () => {
    const writer = await acct.key(['secrets:read', 'secrets:write', 'intelligence:read']);
    const made = await api('POST', '/api/v1/secrets', { key: writer, body: { name: unique('pw'), data: { password: 'letmein', note: 'x' } } });
    expect(made.status, made.text).toBe(201);
    const id = made.body.data.secret.id as string;
    const res = await check({ credential: { type: 'secret', id } }, writer);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ breached: true, count: 583_190, checked: { type: 'secret', id } });
    expect(res.text).not.toContain('letmein');
    const byField = await check({ credential: { type: 'secret', id, field: 'note' } }, writer);
    expect(byField.body.data.breached).toBe(false);
    const noField = await check({ credential: { type: 'secret', id, field: 'nope' } }, writer);
    expect(noField.status).toBe(400);
    // without the secret's read scope: 403; another account's id, or an unknown one: 404
    const denied = await check({ credential: { type: 'secret', id } });
    expect(denied.status).toBe(403);
    expect(errorCode(denied)).toBe('insufficient_scope');
    const foreign = await check({ credential: { type: 'secret', id } }, await other.key(['secrets:read', 'intelligence:read']));
    expect(foreign.status).toBe(404);
    expect((await check({ credential: { type: 'secret', id: MISSING } }, writer)).status).toBe(404);
    expect((await check({ credential: { type: 'no-such-type', id } }, writer)).status).toBe(404);
  });

  it('401, 403, 400', async () => {
    expect((await check({ password: 'x' }, 'scm_bad')).status).toBe(401);
    const wrong = await check({ password: 'x' }, await acct.key(['secrets:read']));
    expect(wrong.status).toBe(403);
    for (const body of [{}, { password: '' }, { password: 'a', credential: { type: 'secret', id: MISSING } }, { pass: 'x' }]) {
      const res = await check(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(errorCode(res)).toBe('validation_failed');
    }
  });

  it('no checked password reaches the table or the log', async () => {
    await new Promise((r) => setTimeout(r, 200));
    const leaks = await findLeaks({
      dynamoEndpoint: inject('dynamoEndpoint'),
      tableName: inject('tableName'),
      logText: readFileSync(inject('logFile'), 'utf8'),
      extra: ['P@ssw0rd'],
    });
    expect(leaks).toEqual([]);
  });
});

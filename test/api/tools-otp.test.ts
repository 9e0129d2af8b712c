import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generate, toHex, toWords } from '../../lib/tools/skey/otp.js';
import { api, canary, errorCode, newAccount, type TestAccount } from '../helpers/api.js';
import { allowLoopback, createWebhook, eventually, receiver, type Receiver } from './webhooks.helpers.js';

/**
 * S/KEY sequences (RFC 2289), time-locks with break-glass, and Shamir escrow, through HTTP.
 * The one-time passwords a client would compute are computed here with the RFC's algorithm
 * (lib/tools/skey/otp.ts, checked against the RFC's vectors in test/unit/tools-skey.test.ts).
 */
let acct: TestAccount;
let other: TestAccount;
let reader: string;
let writer: string;
let noScope: string;
const MISSING = '00000000-0000-7000-8000-000000000000';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  [acct, other] = await Promise.all([newAccount('tools-otp'), newAccount('tools-otp-other')]);
  [reader, writer, noScope] = await Promise.all([
    acct.key(['secrets:read']),
    acct.key(['secrets:read', 'secrets:write', 'secrets:delete']),
    acct.key(['transform:use']),
  ]);
});

describe('S/KEY sequences', () => {
  const pass = canary('skey-pass');
  let id = '';
  let seed = '';

  it('creates a sequence from a passphrase it never stores, and shows the next challenge', async () => {
    const res = await api('POST', '/api/v1/skey-otps', { key: writer, body: { name: 'vpn', algorithm: 'sha1', count: 3, passphrase: pass } });
    expect(res.status, res.text).toBe(201);
    const s = res.body.data.skey_otp;
    ({ id, seed } = s);
    expect(seed).toMatch(/^[a-z]{2}\d{8}$/);
    expect(s).toMatchObject({ algorithm: 'sha1', sequence: 3, remaining: 3, exhausted: false, challenge: `otp-sha1 2 ${seed}` });
    expect(res.text).not.toContain(pass);
    const got = await api('GET', `/api/v1/skey-otps/${id}`, { key: reader });
    expect(got.status).toBe(200);
    expect(got.body.data.skey_otp.challenge).toBe(`otp-sha1 2 ${seed}`);
    const list = await api('GET', '/api/v1/skey-otps?limit=10', { key: reader });
    expect(list.status).toBe(200);
    expect(list.body.data.skey_otps.map((x: { id: string }) => x.id)).toContain(id);
  });

  it('accepts the six-word form and the hex form in turn, refuses a wrong or reused OTP, and says when it is exhausted', async () => {
    const otp = (n: number) => generate('sha1', seed, pass, n);
    const wrong = await api('POST', `/api/v1/skey-otps/${id}/verify`, { key: reader, body: { otp: toHex(otp(1)) } });
    expect(wrong.status).toBe(400);
    expect(errorCode(wrong)).toBe('otp_invalid');
    const ok2 = await api('POST', `/api/v1/skey-otps/${id}/verify`, { key: reader, body: { otp: toWords(otp(2)).toLowerCase() } });
    expect(ok2.status, ok2.text).toBe(200);
    expect(ok2.body.data).toMatchObject({ verified: true, skey_otp: { sequence: 2, challenge: `otp-sha1 1 ${seed}` } });
    const replay = await api('POST', `/api/v1/skey-otps/${id}/verify`, { key: reader, body: { otp: toWords(otp(2)) } });
    expect(errorCode(replay)).toBe('otp_invalid');
    const ok1 = await api('POST', `/api/v1/skey-otps/${id}/verify`, { key: reader, body: { otp: toHex(otp(1)).toUpperCase() } });
    expect(ok1.status).toBe(200);
    const ok0 = await api('POST', `/api/v1/skey-otps/${id}/verify`, { key: reader, body: { otp: toHex(otp(0)) } });
    expect(ok0.body.data.skey_otp).toMatchObject({ sequence: 0, exhausted: true, challenge: null });
    const done = await api('POST', `/api/v1/skey-otps/${id}/verify`, { key: reader, body: { otp: toHex(otp(0)) } });
    expect(done.status).toBe(409);
    expect(errorCode(done)).toBe('skey_exhausted');
  });

  it('20 concurrent verifications of one OTP: exactly one succeeds', async () => {
    const create = await api('POST', '/api/v1/skey-otps', { key: writer, body: { name: 'race', count: 50, passphrase: pass, seed: 'Race42' } });
    expect(create.status).toBe(201);
    expect(create.body.data.skey_otp.challenge).toBe('otp-md5 49 Race42');
    const otp = toWords(generate('md5', 'Race42', pass, 49));
    const results = await Promise.all(
      Array.from({ length: 20 }, () => api('POST', `/api/v1/skey-otps/${create.body.data.skey_otp.id}/verify`, { key: reader, body: { otp } })),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    // the losers either saw the new state (400 otp_invalid) or lost the conditional write (409 otp_replayed)
    for (const r of results.filter((x) => x.status !== 200)) expect(['otp_invalid', 'otp_replayed']).toContain(errorCode(r));
    const after = await api('GET', `/api/v1/skey-otps/${create.body.data.skey_otp.id}`, { key: reader });
    expect(after.body.data.skey_otp.sequence).toBe(49);
  });

  it('takes an initial OTP computed by the client instead of the passphrase', async () => {
    const initial = toHex(generate('md5', 'abc123', pass, 10));
    const res = await api('POST', '/api/v1/skey-otps', { key: writer, body: { name: 'client', count: 10, seed: 'abc123', initial_otp: initial } });
    expect(res.status).toBe(201);
    const v = await api('POST', `/api/v1/skey-otps/${res.body.data.skey_otp.id}/verify`, {
      key: reader,
      body: { otp: toWords(generate('md5', 'abc123', pass, 9)) },
    });
    expect(v.status).toBe(200);
    const bad = await api('POST', '/api/v1/skey-otps', { key: writer, body: { name: 'x', initial_otp: 'NOT AN OTP AT ALL HERE' } });
    expect(bad.status).toBe(400);
  });

  it('400 on bad bodies, 401, 403 without the scopes, 404 across accounts, and deletes', async () => {
    for (const body of [
      { name: 'x' },
      { name: 'x', passphrase: 'short' },
      { name: 'x', passphrase: pass, seed: 'has space' },
      { name: 'x', passphrase: pass, algorithm: 'md4' },
    ]) {
      const res = await api('POST', '/api/v1/skey-otps', { key: writer, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(errorCode(res)).toBe('validation_failed');
    }
    const malformed = await api('POST', `/api/v1/skey-otps/${id}/verify`, { key: reader, body: { otp: 'xyz' } });
    expect(malformed.status).toBe(400);
    expect((await api('GET', `/api/v1/skey-otps/${id}`)).status).toBe(401);
    for (const [m, p, b] of [
      ['GET', `/api/v1/skey-otps/${id}`, undefined],
      ['POST', `/api/v1/skey-otps/${id}/verify`, { otp: '0000000000000000' }],
      ['POST', '/api/v1/skey-otps', { name: 'x', passphrase: pass }],
      ['DELETE', `/api/v1/skey-otps/${id}`, undefined],
    ] as const) {
      const res = await api(m, p, { key: noScope, body: b });
      expect(res.status, p).toBe(403);
      expect(errorCode(res)).toBe('insufficient_scope');
    }
    for (const [m, p, b] of [
      ['GET', `/api/v1/skey-otps/${id}`, undefined],
      ['POST', `/api/v1/skey-otps/${id}/verify`, { otp: '0000000000000000' }],
      ['DELETE', `/api/v1/skey-otps/${id}`, undefined],
    ] as const) {
      const res = await api(m, p, { key: other.adminKey, body: b });
      expect(res.status, p).toBe(404);
    }
    const del = await api('DELETE', `/api/v1/skey-otps/${id}`, { key: writer });
    expect(del.status).toBe(200);
    expect((await api('GET', `/api/v1/skey-otps/${id}`, { key: reader })).status).toBe(404);
    expect((await api('DELETE', `/api/v1/skey-otps/${MISSING}`, { key: writer })).status).toBe(404);
  });
});

describe('escrow split and combine', () => {
  const secret = canary('escrow');

  it('splits 3-of-5: any 3 shares give the secret back, any 2 fail, mixed or altered shares fail clearly', async () => {
    const res = await api('POST', '/api/v1/escrow/split', { key: reader, body: { secret, shares: 5, threshold: 3 } });
    expect(res.status, res.text).toBe(200);
    const shares: string[] = res.body.data.shares;
    expect(shares).toHaveLength(5);
    expect(res.body.data.threshold).toBe(3);
    const triples = [
      [0, 1, 2],
      [0, 2, 4],
      [1, 3, 4],
      [4, 2, 0],
      [2, 3, 4],
    ];
    for (const t of triples) {
      const c = await api('POST', '/api/v1/escrow/combine', { key: reader, body: { shares: t.map((i) => shares[i]) } });
      expect(c.status, c.text).toBe(200);
      expect(c.body.data.secret).toBe(secret);
    }
    const all = await api('POST', '/api/v1/escrow/combine', { key: reader, body: { shares } });
    expect(all.body.data.secret).toBe(secret);
    for (const pair of [
      [0, 1],
      [3, 4],
      [1, 4],
    ]) {
      const c = await api('POST', '/api/v1/escrow/combine', { key: reader, body: { shares: pair.map((i) => shares[i]) } });
      expect(c.status).toBe(400);
      expect(errorCode(c)).toBe('shares_invalid');
      expect(c.body.error).toContain('needs 3 shares; 2 were given');
    }
    const again = await api('POST', '/api/v1/escrow/split', {
      key: reader,
      body: { secret_base64: Buffer.from([0, 255, 1]).toString('base64'), shares: 3, threshold: 2 },
    });
    const mixed = await api('POST', '/api/v1/escrow/combine', { key: reader, body: { shares: [shares[0], shares[1], again.body.data.shares[0]] } });
    expect(errorCode(mixed)).toBe('shares_invalid');
    expect(mixed.body.error).toContain('different splits');
    const bytes = await api('POST', '/api/v1/escrow/combine', { key: reader, body: { shares: again.body.data.shares.slice(1) } });
    expect(bytes.body.data).toMatchObject({ secret: null, secret_base64: Buffer.from([0, 255, 1]).toString('base64') });
    const s0 = shares[0]!;
    const tampered = `${s0.slice(0, -3)}${s0.at(-3) === 'A' ? 'B' : 'A'}${s0.slice(-2)}`;
    const altered = await api('POST', '/api/v1/escrow/combine', { key: reader, body: { shares: [tampered, shares[1], shares[2]] } });
    expect(errorCode(altered)).toBe('shares_invalid');
    const dup = await api('POST', '/api/v1/escrow/combine', { key: reader, body: { shares: [shares[0], shares[0], shares[1]] } });
    expect(dup.body.error).toContain('twice');
    const junk = await api('POST', '/api/v1/escrow/combine', { key: reader, body: { shares: ['hello', shares[1]] } });
    expect(junk.body.details[0].path).toBe('body.shares.0');
  });

  it('400 on bad bodies, 401 and 403', async () => {
    for (const body of [
      { secret, shares: 5, threshold: 6 },
      { secret, shares: 1, threshold: 1 },
      { shares: 3, threshold: 2 },
      { secret, secret_base64: 'AA==', shares: 3, threshold: 2 },
    ]) {
      const res = await api('POST', '/api/v1/escrow/split', { key: reader, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect((await api('POST', '/api/v1/escrow/combine', { key: reader, body: { shares: [] } })).status).toBe(400);
    expect((await api('POST', '/api/v1/escrow/split', { body: { secret, shares: 3, threshold: 2 } })).status).toBe(401);
    const forbidden = await api('POST', '/api/v1/escrow/combine', { key: noScope, body: { shares: ['a'] } });
    expect(errorCode(forbidden)).toBe('insufficient_scope');
  });
});

// concurrently: each test seals its own time-lock, and three of them wait out an 8 s delay
describe.concurrent('time-locks with break-glass', () => {
  let hook: Receiver;
  beforeAll(async () => {
    hook = await receiver();
    await allowLoopback(acct);
    await createWebhook(acct, { url: hook.url, events: ['timelock.*'] });
  });
  afterAll(() => hook.close());

  const seal = (body: Record<string, unknown>) => api('POST', '/api/v1/timelocks', { key: writer, body });
  const read = (id: string, key = reader) => api('GET', `/api/v1/timelocks/${id}`, { key });
  const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();
  const waitUntil = async (iso: string) => sleep(Math.max(0, Date.parse(iso) - Date.now()) + 300);

  // 8 s ahead: on a loaded machine the seal and the first read took more than 2 s, and the
  // "before" read then came after the release time
  it('refuses the value before its time and serves it after (a release time 8 s ahead)', async () => {
    const value = canary('timelock');
    const res = await seal({ name: 'soon', value, release_at: inSeconds(8) });
    expect(res.status, res.text).toBe(201);
    const lock = res.body.data.timelock;
    const before = await read(lock.id);
    expect(before.status).toBe(200);
    expect(before.body.data).toMatchObject({ value: null, timelock: { released: false, break_glass: null } });
    expect(before.body.data.timelock.seconds_left).toBeGreaterThan(0);
    expect(before.text).not.toContain(value);
    await waitUntil(lock.release_at);
    const after = await read(lock.id);
    expect(after.status, after.text).toBe(200);
    expect(after.body.data).toMatchObject({ value, timelock: { released: true, released_by: 'time', seconds_left: 0 } });
    expect((await read(lock.id)).body.data.value).toBe(value);
    await eventually(async () => hook.received.find((r) => r.body.includes('"timelock.released"') && r.body.includes(lock.id)), 'timelock.released');
  });

  it('break-glass: a request announced by webhook opens the value after the delay unless vetoed', async () => {
    const value = canary('glass');
    // 8 s of delay: the announcement and the 'still closed' read must come before it, on a loaded machine too
    const res = await seal({ action: 'seal', name: 'glass', value, release_at: inSeconds(86400), break_glass: { delay_seconds: 8 } });
    const id = res.body.data.timelock.id;
    expect(res.body.data.timelock.break_glass).toMatchObject({ status: 'armed', delay_seconds: 8 });
    const req = await seal({ action: 'request_release', id, reason: 'incident 42' });
    expect(req.status, req.text).toBe(200);
    const pending = req.body.data.timelock;
    expect(pending).toMatchObject({ released: false, break_glass: { status: 'pending', reason: 'incident 42' } });
    const again = await seal({ action: 'request_release', id, reason: 'again' });
    expect(again.status).toBe(409);
    // still closed, read at once: the announcement travels through the stream and the queue,
    // which on a loaded machine took longer than the delay (the read after it found it open)
    const closed = await read(id);
    expect(closed.body.data).toMatchObject({ value: null, timelock: { released: false, break_glass: { status: 'pending' } } });
    expect(closed.text).not.toContain(value);
    const announced = await eventually(
      async () => hook.received.find((r) => r.body.includes('"timelock.break_glass_requested"') && r.body.includes(id)),
      'the break-glass announcement',
    );
    expect(JSON.parse(announced.body).data).toMatchObject({ id, reason: 'incident 42', break_glass_release_at: pending.break_glass.release_after });
    await waitUntil(pending.break_glass.release_after);
    expect((await read(id)).body.data).toMatchObject({ value, timelock: { released: true, released_by: 'break_glass' } });
    const late = await api('POST', '/api/v1/timelocks', { key: acct.adminKey, body: { action: 'veto', id } });
    expect(late.status).toBe(409);
  });

  it('a break-glass request vetoed by the veto-share holders never releases', async () => {
    const value = canary('vetoed');
    const res = await seal({
      name: 'vetoed',
      value,
      release_at: inSeconds(86400),
      // the veto (six requests later) must come before the delay ends, on a loaded machine too
      break_glass: { delay_seconds: 8, veto_shares: { shares: 3, threshold: 2 } },
    });
    expect(res.status).toBe(201);
    const { timelock, veto_shares } = res.body.data;
    expect(veto_shares).toHaveLength(3);
    expect((await seal({ action: 'request_release', id: timelock.id, reason: 'lost laptop' })).status).toBe(200);
    const noAdmin = await seal({ action: 'veto', id: timelock.id });
    expect(noAdmin.status).toBe(403);
    const one = await seal({ action: 'veto', id: timelock.id, shares: [veto_shares[0]] });
    expect(errorCode(one)).toBe('shares_invalid');
    const foreign = await api('POST', '/api/v1/escrow/split', { key: reader, body: { secret: 'x', shares: 2, threshold: 2 } });
    expect((await seal({ action: 'veto', id: timelock.id, shares: foreign.body.data.shares })).status).toBe(403);
    const veto = await seal({ action: 'veto', id: timelock.id, reason: 'not authorised', shares: [veto_shares[2], veto_shares[0]] });
    expect(veto.status, veto.text).toBe(200);
    expect(veto.body.data.timelock.break_glass).toMatchObject({ status: 'vetoed', veto_reason: 'not authorised' });
    await waitUntil(veto.body.data.timelock.break_glass.release_after);
    const after = await read(timelock.id);
    expect(after.body.data).toMatchObject({ value: null, timelock: { released: false, break_glass: { status: 'vetoed' } } });
    expect(after.text).not.toContain(value);
    const retry = await seal({ action: 'request_release', id: timelock.id, reason: 'again' });
    expect(retry.status).toBe(409);
    expect(retry.body.error).toContain('vetoed');
    await eventually(
      async () => hook.received.find((r) => r.body.includes('"timelock.break_glass_vetoed"') && r.body.includes(timelock.id)),
      'the veto event',
    );
  });

  it('an admin vetoes without shares; a time-lock without break-glass takes no request', async () => {
    const res = await seal({ name: 'admin', value: canary('admin'), release_at: inSeconds(86400), break_glass: { delay_seconds: 1 } });
    const id = res.body.data.timelock.id;
    expect((await seal({ action: 'veto', id })).status).toBe(409); // nothing pending
    await seal({ action: 'request_release', id, reason: 'r' });
    const withShares = await seal({ action: 'veto', id, shares: ['escrow1.0000000000000000.2.AAAA'] });
    expect(withShares.status).toBe(400); // no veto shares on this one
    const veto = await api('POST', '/api/v1/timelocks', { key: acct.adminKey, body: { action: 'veto', id } });
    expect(veto.status).toBe(200);
    await sleep(1300);
    expect((await read(id)).body.data.value).toBeNull();
    const plain = await seal({ name: 'plain', value: canary('plain'), release_at: inSeconds(86400) });
    expect((await seal({ action: 'request_release', id: plain.body.data.timelock.id, reason: 'r' })).status).toBe(400);
  });

  it('400 on bad bodies, 401, 403 without the scopes, 404 across accounts', async () => {
    for (const body of [
      { name: 'x', value: 'v', release_at: inSeconds(-10) },
      { name: 'x', value: 'v', release_at: 'tomorrow' },
      { name: 'x', value: 'v', release_at: inSeconds(20 * 366 * 86400) },
      { action: 'explode', id: MISSING },
      { action: 'request_release', id: 'nope', reason: 'r' },
      { name: 'x', value: 'v', release_at: inSeconds(60), break_glass: { delay_seconds: 1, veto_shares: { shares: 2, threshold: 3 } } },
    ]) {
      const res = await seal(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const res = await seal({ name: 'mine', value: canary('mine'), release_at: inSeconds(60), break_glass: { delay_seconds: 5 } });
    const id = res.body.data.timelock.id;
    expect((await read(id, '')).status).toBe(401);
    expect(errorCode(await read(id, noScope))).toBe('insufficient_scope');
    expect(errorCode(await api('POST', '/api/v1/timelocks', { key: reader, body: { name: 'x', value: 'v', release_at: inSeconds(60) } }))).toBe(
      'insufficient_scope',
    );
    expect((await read(id, other.adminKey)).status).toBe(404);
    expect((await api('POST', '/api/v1/timelocks', { key: other.adminKey, body: { action: 'request_release', id, reason: 'r' } })).status).toBe(404);
    expect((await read(MISSING)).status).toBe(404);
  });
});

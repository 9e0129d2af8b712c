import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { api, baseUrl, canary, errorCode, newAccount, unique, type TestAccount } from '../helpers/api.js';
import { findLeaks } from '../helpers/leaks.js';
import { createTyped, store, type Store } from './sharing-helpers.js';

let a: TestAccount;
let b: TestAccount;
let s: Store;
let granter: string;
/** Every token issued: none may be stored in the table in plaintext. */
const tokens: string[] = [];

beforeAll(async () => {
  [a, b] = await Promise.all([newAccount('temp-a'), newAccount('temp-b')]);
  granter = await a.key(['secrets:read', 'secrets:write', 'temp-access:create', 'sharing:manage']);
  s = await store();
});

async function ownedSecret(key = granter) {
  const value = canary('temp');
  const res = await api('POST', '/api/v1/secrets', { key, body: { name: unique('t'), data: { value } } });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.data.secret.id as string, name: res.body.data.secret.name as string, value };
}

async function grant(type: string, id: string, body: Record<string, unknown> = { duration_seconds: 600 }, key = granter) {
  const res = await api('POST', `/api/v1/${type}/${id}/temp-access`, { key, body });
  expect(res.status, res.text).toBe(201);
  tokens.push(res.body.data.token);
  return res.body.data as { grant: { id: string; expires_at: string; single_use: boolean; status: string }; url: string; token: string };
}

/** Redeems a URL as an anonymous client: no credentials at all. */
const redeem = (url: string) => api('GET', new URL(url).pathname);

describe('POST /api/v1/{type}/{id}/temp-access', () => {
  it('returns the grant and the complete redemption URL once; only a hash of the token is stored', async () => {
    const sec = await ownedSecret();
    const before = Date.now();
    const g = await grant('secret', sec.id, { duration_seconds: 900 });
    expect(g.url).toBe(`${baseUrl()}/api/v1/t/${g.token}`);
    expect(g.token).toMatch(/^sct_[A-Za-z0-9_-]{43}$/);
    expect(g.grant).toMatchObject({ type: 'secret', resource_id: sec.id, single_use: true, status: 'active', uses: 0 });
    const expires = Date.parse(g.grant.expires_at);
    expect(expires).toBeGreaterThanOrEqual(before + 900_000 - 5_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 900_000);
    const hash = createHash('sha256').update(g.token).digest('hex');
    expect(await s.getItem(s.keys.tempToken(hash))).toMatchObject({ id: g.grant.id, tenant_id: a.tenantId, token_hash: hash });
    // the listing never shows the token or its hash
    const list = await api('GET', `/api/v1/secret/${sec.id}/temp-access`, { key: granter });
    expect(list.status).toBe(200);
    expect(list.body.data.grants).toEqual([expect.objectContaining({ id: g.grant.id, status: 'active' })]);
    expect(list.text).not.toContain(g.token);
    expect(list.text).not.toContain(hash);
    expect((await s.audits(a.tenantId)).some((e) => e.action === 'temp_access.create' && e.detail?.grant_id === g.grant.id)).toBe(true);
  });

  it.each([
    ['too short a duration', { duration_seconds: 59 }],
    ['a duration past the 30-day ceiling', { duration_seconds: 30 * 86400 + 1 }],
    ['a string duration', { duration_seconds: '600' }],
    ['a fractional duration', { duration_seconds: 60.5 }],
    ['no duration', {}],
    ['single_use not a boolean', { duration_seconds: 600, single_use: 'yes' }],
    ['an unknown field', { duration_seconds: 600, max_uses: 3 }],
  ])('400 on %s', async (_l, body) => {
    const sec = await ownedSecret();
    const res = await api('POST', `/api/v1/secret/${sec.id}/temp-access`, { key: granter, body });
    expect(res.status).toBe(400);
    expect(errorCode(res)).toBe('validation_failed');
  });

  it("404 for another account's resource or an unknown type; 403 without the type's read scope", async () => {
    const theirs = await ownedSecret(b.adminKey);
    expect((await api('POST', `/api/v1/secret/${theirs.id}/temp-access`, { key: a.adminKey, body: { duration_seconds: 600 } })).status).toBe(404);
    const mine = await ownedSecret();
    expect((await api('POST', `/api/v1/doohickey/${mine.id}/temp-access`, { key: a.adminKey, body: { duration_seconds: 600 } })).status).toBe(404);
    const creatorOnly = await a.key(['temp-access:create']);
    const res = await api('POST', `/api/v1/secret/${mine.id}/temp-access`, { key: creatorOnly, body: { duration_seconds: 600 } });
    expect(res.status).toBe(403);
    expect(errorCode(res)).toBe('insufficient_scope');
    expect((await api('GET', `/api/v1/secret/${mine.id}/temp-access`, { key: b.adminKey })).status).toBe(404);
    expect((await api('GET', '/api/v1/secret/not-a-uuid/temp-access', { key: a.adminKey })).status).toBe(400);
    expect((await api('POST', '/api/v1/secret/not-a-uuid/temp-access', { key: a.adminKey, body: { duration_seconds: 600 } })).status).toBe(400);
  });
});

describe('the account setting temp_access_max_seconds caps a grant', () => {
  it('default one day: 86400 s is granted, 86401 s and 7 days are refused with the setting named; 120 s refuses 3600 s; 30 days allows 10 days', async () => {
    const c = await newAccount('temp-cap');
    const value = canary('temp-cap');
    const made = await api('POST', '/api/v1/secrets', { key: c.adminKey, body: { name: unique('cap'), data: { value } } });
    const id = made.body.data.secret.id as string;
    const create = (duration_seconds: number) => api('POST', `/api/v1/secret/${id}/temp-access`, { key: c.adminKey, body: { duration_seconds } });
    const refused = async (duration_seconds: number, max: number) => {
      const res = await create(duration_seconds);
      expect(res.status, res.text).toBe(400);
      expect(errorCode(res)).toBe('validation_failed');
      expect(res.body.details).toEqual([
        {
          path: 'body.duration_seconds',
          message: `at most ${max} seconds: the account setting temp_access_max_seconds (default 86400) caps temporary access; ask an administrator to raise it with PUT /api/v1/settings`,
        },
      ]);
    };
    const granted = async (duration_seconds: number) => {
      const res = await create(duration_seconds);
      expect(res.status, res.text).toBe(201);
      tokens.push(res.body.data.token);
      expect(Date.parse(res.body.data.grant.expires_at) - Date.now()).toBeGreaterThan((duration_seconds - 60) * 1000);
    };
    await granted(86_400);
    await refused(86_401, 86_400);
    await refused(7 * 86_400, 86_400);
    const setting = (v: number | null) => api('PUT', '/api/v1/settings', { key: c.adminKey, body: { temp_access_max_seconds: v } });
    expect((await setting(120)).status).toBe(200);
    await refused(3_600, 120);
    await granted(120);
    expect((await setting(30 * 86_400)).status).toBe(200);
    await granted(10 * 86_400);
    expect((await setting(null)).status).toBe(200);
    await refused(10 * 86_400, 86_400);
  });
});

describe('GET /api/v1/t/{token}', () => {
  it('works without any credential; a single-use grant answers once, then 410 temp_access_used', async () => {
    const sec = await ownedSecret();
    const g = await grant('secret', sec.id);
    const first = await redeem(g.url);
    expect(first.status, first.text).toBe(200);
    expect(first.body.data).toMatchObject({
      resource: { type: 'secret', id: sec.id, name: sec.name, version: 1 },
      data: { value: sec.value },
      grant: { id: g.grant.id, uses: 1, status: 'used' },
    });
    const second = await redeem(g.url);
    expect(second.status).toBe(410);
    expect(errorCode(second)).toBe('temp_access_used');
    expect(second.text).not.toContain(sec.value);
    const audit = (await s.audits(a.tenantId)).find((e) => e.action === 'temp_access.redeem' && e.detail?.grant_id === g.grant.id);
    expect(audit?.actor).toMatchObject({ type: 'temp_token', id: g.grant.id, user: null, tenant_id: a.tenantId });
  });

  it('a multi-use grant answers until revoked; then 410 temp_access_revoked (revoking again is idempotent)', async () => {
    const sec = await ownedSecret();
    const g = await grant('secret', sec.id, { duration_seconds: 600, single_use: false });
    for (let i = 0; i < 3; i++) expect((await redeem(g.url)).status).toBe(200);
    // it always reads the current value
    const value = canary('newer');
    await api('PUT', `/api/v1/secrets/${sec.name}`, { key: granter, body: { data: { value } }, headers: { 'if-match': `"${sec.id}.1"` } });
    expect((await redeem(g.url)).body.data.data).toEqual({ value });
    expect((await api('GET', `/api/v1/secret/${sec.id}/temp-access`, { key: granter })).body.data.grants[0]).toMatchObject({
      uses: 4,
      status: 'active',
    });

    expect((await api('DELETE', `/api/v1/temp-access/${g.grant.id}`, { key: b.adminKey })).status).toBe(404);
    const revoked = await api('DELETE', `/api/v1/temp-access/${g.grant.id}`, { key: granter });
    expect(revoked.status).toBe(200);
    expect(revoked.body.data.grant).toMatchObject({ id: g.grant.id, status: 'revoked' });
    const after = await redeem(g.url);
    expect(after.status).toBe(410);
    expect(errorCode(after)).toBe('temp_access_revoked');
    expect(after.text).not.toContain(value);
    expect((await api('DELETE', `/api/v1/temp-access/${g.grant.id}`, { key: granter })).body.data.grant.status).toBe('revoked');
    expect((await s.audits(a.tenantId)).filter((e) => e.action === 'temp_access.revoke' && e.detail?.grant_id === g.grant.id)).toHaveLength(1);
  });

  it('fails after expiry (checked on every read, before any TTL clean-up): 410 temp_access_expired', async () => {
    const sec = await ownedSecret();
    const g = await grant('secret', sec.id, { duration_seconds: 600, single_use: false });
    expect((await redeem(g.url)).status).toBe(200);
    // the clock moves past expiry: the stored expiry is what every read compares with
    const hash = createHash('sha256').update(g.token).digest('hex');
    await s.setAttribute(s.keys.tempToken(hash), 'expires_ms', Date.now() - 1000);
    const res = await redeem(g.url);
    expect(res.status).toBe(410);
    expect(errorCode(res)).toBe('temp_access_expired');
    expect(res.text).not.toContain(sec.value);
  });

  it('404 for a token never issued or malformed, and for a resource deleted since', async () => {
    expect((await api('GET', `/api/v1/t/sct_${'A'.repeat(43)}`)).status).toBe(404);
    expect((await api('GET', '/api/v1/t/not-a-token')).status).toBe(404);
    const sec = await ownedSecret();
    const g = await grant('secret', sec.id);
    expect((await api('DELETE', `/api/v1/secrets/${sec.name}`, { key: a.adminKey })).status).toBe(200);
    expect((await redeem(g.url)).status).toBe(404);
  });

  it('concurrent redemptions of a single-use token: exactly one gets the value', async () => {
    const sec = await ownedSecret();
    const g = await grant('secret', sec.id);
    const results = await Promise.all(Array.from({ length: 6 }, () => redeem(g.url)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status !== 200).every((r) => r.status === 410 || r.status === 409)).toBe(true);
  });

  it('works for typed resources written through the shared store', async () => {
    const ctx = await s.ctxFor(a.tenantId, a.adminEmail);
    const password = canary('pw');
    const pw = await createTyped(s, ctx, { type: 'password', name: unique('pw'), meta: { username: 'alice' }, secret: { password } });
    const g = await grant('password', pw.id, { duration_seconds: 60 }, a.adminKey);
    const res = await redeem(g.url);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ resource: { type: 'password', id: pw.id, meta: { username: 'alice' } }, data: { password } });
  });

  it('DELETE /temp-access/{grant_id}: 400 on a non-UUID id, 404 for an unknown one', async () => {
    expect((await api('DELETE', '/api/v1/temp-access/xyz', { key: granter })).status).toBe(400);
    expect((await api('DELETE', '/api/v1/temp-access/01900000-0000-7000-8000-000000000033', { key: granter })).status).toBe(404);
  });

  it('no token ever lands in the table or the logs', async () => {
    expect(tokens.length).toBeGreaterThan(5);
    await new Promise((r) => setTimeout(r, 200));
    const { readFileSync } = await import('node:fs');
    const leaks = await findLeaks({
      dynamoEndpoint: inject('dynamoEndpoint'),
      tableName: inject('tableName'),
      logText: readFileSync(inject('logFile'), 'utf8'),
      extra: tokens,
    });
    expect(leaks.filter((l) => tokens.some((t) => l.includes(t.slice(0, 12))))).toEqual([]);
  });
});

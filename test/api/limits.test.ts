import { readFileSync } from 'node:fs';
import { describe, expect, inject, it } from 'vitest';
import { api, canary, errorCode, newAccount, rootKey, unique, type ApiResponse } from '../helpers/api.js';
import { retireEnvironments } from '../helpers/artifact-control.js';
import { setQuota } from './webhooks.helpers.js';

describe('rate limits', () => {
  it('an account over its requests_per_minute gets 429 with Retry-After and RateLimit headers', async () => {
    const a = await newAccount('rl');
    await setQuota(a.tenantId, { requests_per_minute: 5 });
    const statuses: number[] = [];
    let limited: ApiResponse | undefined;
    let okRes: ApiResponse | undefined;
    for (let i = 0; i < 8; i++) {
      const res = await api('GET', '/api/v1/usage', { key: a.adminKey });
      statuses.push(res.status);
      if (res.status === 429) limited ??= res;
      else okRes ??= res;
    }
    // burst = 5, refill 5/60 per second: the first five pass, the rest are refused
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(statuses.slice(5)).toEqual([429, 429, 429]);
    expect(errorCode(limited!)).toBe('rate_limited');
    const retryAfter = Number(limited!.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(12);
    expect(limited!.headers.get('ratelimit-policy')).toBe('"account";q=5;w=60');
    expect(limited!.headers.get('ratelimit')).toMatch(/^"account";r=0;t=\d+$/);
    expect(okRes!.headers.get('ratelimit-policy')).toBe('"account";q=5;w=60');
    expect(okRes!.headers.get('ratelimit')).toMatch(/^"account";r=4;t=\d+$/);
    // refused requests are not counted as usage
    await setQuota(a.tenantId, { requests_per_minute: 6000 });
    const usage = await eventuallyAllowed(a.adminKey);
    expect(usage.body.data.requests.today).toBe(6);
  });

  it("a busy account (leased tokens, lib/ratelimit/bucket.ts): all admitted within its rate, the day's count within the bound of the tokens held", async () => {
    const a = await newAccount('rl-busy');
    const statuses: number[] = [];
    // one after another, as fast as the runtime answers: the limiter leases tokens (up to 10 a write)
    for (let i = 0; i < 60; i++) statuses.push((await api('GET', '/api/v1/secrets', { key: a.adminKey })).status);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    const usage = await api('GET', '/api/v1/usage', { key: a.adminKey });
    expect(usage.status).toBe(200);
    // 61 admitted; a process counts what it admitted from a lease with its next write, so up to
    // LEASE_MAX - 1 = 9 may not be counted yet (the list's and the usage route's: two functions,
    // two processes at most here); none is counted twice, none that was not admitted
    const today = usage.body.data.requests.today as number;
    expect(today).toBeGreaterThanOrEqual(61 - 2 * 9);
    expect(today).toBeLessThanOrEqual(61);
  });

  it('a quiet account (5 a second: leased tokens too): GET /api/v1/usage never reports a request that was not made, nor misses more than a lease holds; after 4 idle seconds it counts every one', async () => {
    const a = await newAccount('rl-quiet');
    const seen: number[] = [];
    let sent = 0;
    for (let i = 0; i < 20; i++) {
      const started = Date.now();
      const res = await api('GET', '/api/v1/usage', { key: a.adminKey });
      sent++;
      expect(res.status).toBe(200);
      const today = res.body.data.requests.today as number;
      // this request is admitted before the read: counted by its own write, or pending with
      // those its container admitted from its lease (≤ LEASE_MAX - 1 = 9); never one not made
      expect(today).toBeLessThanOrEqual(sent);
      expect(today).toBeGreaterThanOrEqual(sent - 9);
      seen.push(today);
      await new Promise((r) => setTimeout(r, Math.max(0, 200 - (Date.now() - started))));
    }
    // the counts only grow, and some requests were admitted from a lease (fewer writes than requests)
    expect(seen).toEqual([...seen].sort((x, y) => x - y));
    // idle past the lease's window: the next request's write counts the pending ones with itself
    await new Promise((r) => setTimeout(r, 4_500));
    const last = await api('GET', '/api/v1/usage', { key: a.adminKey });
    sent++;
    // exact unless the runtime retired the function's container meanwhile (the artifact runtime: its
    // pending, ≤ 9, are written by its SIGTERM handler, or lost past the 500 ms Lambda gives)
    expect(last.body.data.requests.today).toBeLessThanOrEqual(sent);
    expect(last.body.data.requests.today).toBeGreaterThanOrEqual(sent - 9);
  });

  it.runIf(inject('runtime') === 'artifact')(
    "a container's end loses no count: the requests a function's environment admitted from its lease are written when Lambda retires it (SIGTERM to a runtime with an extension)",
    async () => {
      const a = await newAccount('rl-end');
      const n = 9;
      // one after another: written at the 1st, 2nd and 4th (leases of 1, 2, 6 tokens), then from the lease
      for (let i = 0; i < n; i++) expect((await api('GET', '/api/v1/secrets', { key: a.adminKey })).status).toBe(200);
      // the usage route's first request of the account is written at once (a lease of 1) and read after
      const before = (await api('GET', '/api/v1/usage', { key: a.adminKey })).body.data.requests.today as number;
      // some of the list's requests are held by its environment, not written yet (at most LEASE_MAX - 1)
      expect(before).toBeLessThan(n + 1);
      expect(before).toBeGreaterThanOrEqual(n + 1 - 9);
      // Lambda retires the list's environment: SIGTERM (the bundle registered an internal extension), its count written
      const retired = await retireEnvironments('GET', '/api/v1/secrets');
      expect(retired.retired).toBeGreaterThanOrEqual(1);
      const after = await api('GET', '/api/v1/usage', { key: a.adminKey });
      expect(after.status).toBe(200);
      // every request made is counted: the nine, and the two usage reads
      expect(after.body.data.requests.today).toBe(n + 2);
      // by the runtime's SIGTERM handler: each retired environment had registered the extension
      expect(retired.terminated).toBe(retired.retired);
    },
  );

  it('a credential over requests_per_minute_per_credential is limited; another key of the account is not', async () => {
    const a = await newAccount('rlc');
    const k1 = await a.key(['secrets:read']);
    const k2 = await a.key(['secrets:write']);
    await setQuota(a.tenantId, { requests_per_minute: 1000, requests_per_minute_per_credential: 3 });
    const first = [];
    for (let i = 0; i < 4; i++) first.push(await api('GET', '/api/v1/secrets', { key: k1 }));
    expect(first.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    expect(first[3]!.headers.get('ratelimit-policy')).toBe('"credential";q=3;w=60');
    expect(first[3]!.headers.get('retry-after')).toMatch(/^\d+$/);
    const other = await api('GET', '/api/v1/quotas', { key: k2 });
    expect(other.status).toBe(200);
    expect(other.body.data.rate_limits).toMatchObject({ account: { requests_per_minute: 1000 }, credential: { requests_per_minute: 3 } });
  });

  it('requests that authenticate themselves are limited per source IP (headers show the policy)', async () => {
    const res = await api('GET', '/api/v1/t/not-a-real-token-0123456789');
    expect(res.status).not.toBe(429);
    expect(res.headers.get('ratelimit-policy')).toMatch(/^"ip";q=\d+;w=60$/);
  });

  it('GET /api/v1/quotas reports limits; the quota body is validated', async () => {
    const a = await newAccount('q');
    const res = await api('GET', '/api/v1/quotas', { key: a.adminKey });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      tenant_id: a.tenantId,
      rate_limits: { account: { requests_per_minute: expect.any(Number) }, unauthenticated_per_ip: { requests_per_minute: expect.any(Number) } },
      over_quota: { status: 403, code: 'quota_exceeded' },
      over_rate: { status: 429, code: 'rate_limited' },
    });
    const bad = await api('PUT', `/api/v1/admin/tenants/${a.tenantId}/quota`, { key: rootKey(), body: { requests_per_minute: 0 } });
    expect(bad.status).toBe(400);
  });
});

async function eventuallyAllowed(key: string) {
  for (let i = 0; i < 20; i++) {
    const res = await api('GET', '/api/v1/usage', { key });
    if (res.status === 200) return res;
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error('still rate limited');
}

describe('quotas', () => {
  it('max_secrets holds under 20 concurrent creates and usage counts exactly', async () => {
    const a = await newAccount('sq');
    await setQuota(a.tenantId, { max_secrets: 10 });
    const results = await Promise.all(
      Array.from({ length: 20 }, () => api('POST', '/api/v1/secrets', { key: a.adminKey, body: { name: unique('q'), data: { v: canary('q') } } })),
    );
    const created = results.filter((r) => r.status === 201).length;
    expect(created).toBe(10);
    for (const r of results.filter((x) => x.status !== 201)) {
      expect(r.status).toBe(403);
      expect(errorCode(r)).toBe('quota_exceeded');
    }
    const usage = await api('GET', '/api/v1/usage', { key: a.adminKey });
    expect(usage.body.data.secrets).toEqual({ used: 10, limit: 10 });
    expect(usage.body.data.webhooks).toEqual({ used: 0, limit: expect.any(Number) });
    expect(usage.body.data.devices).toMatchObject({ used: 0 });
  });

  it('max_api_keys is enforced the same way', async () => {
    const a = await newAccount('kq');
    await setQuota(a.tenantId, { max_api_keys: 3 });
    const results = await Promise.all(
      Array.from({ length: 6 }, () => api('POST', '/api/v1/api-keys', { key: a.adminKey, body: { name: unique('k'), scopes: ['secrets:read'] } })),
    );
    // the initial admin key counts: two more fit
    expect(results.filter((r) => r.status === 201).length).toBe(2);
    expect(results.filter((r) => r.status === 403).every((r) => errorCode(r) === 'quota_exceeded')).toBe(true);
    const usage = await api('GET', '/api/v1/usage', { key: a.adminKey });
    expect(usage.body.data.api_keys).toEqual({ used: 3, limit: 3 });
  });
});

describe('admission never fails open silently', () => {
  it('no rate-limit check has failed so far in this run (the server log has no fail-open warning)', async () => {
    await api('GET', '/api/v1/usage', { key: (await newAccount('log')).adminKey });
    const log = readFileSync(inject('logFile'), 'utf8');
    expect(log).toContain('"message":"request"');
    expect(log).not.toContain('rate limit check failed');
  });
});

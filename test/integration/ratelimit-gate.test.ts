import { randomUUID } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Principal } from '../../lib/auth/principal.js';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { intercept } from './dynamo-faults.js';
import { table } from './table.js';
import * as g from '../../lib/ratelimit/gate.js';
import { LEASE_MAX } from '../../lib/ratelimit/bucket.js';
import * as errors from '../../lib/core/errors.js';
import { keys } from '../../lib/store/keys.js';

/**
 * lib/ratelimit/gate.ts against the suite's table: which buckets a request takes (account,
 * credential, source IP), the binding decision and its headers, the IP allow-list, fail
 * open, and the audit entry of a denied request.
 */
let t: Awaited<ReturnType<typeof table>>;
const undo: (() => void)[] = [];

beforeAll(async () => {
  t = await table();
});
afterEach(() => {
  while (undo.length > 0) undo.pop()!();
});

const today = () => new Date().toISOString().slice(0, 10);
const usage = (tenantId: string) => t.get(keys.usageDay(tenantId, today()));
const route = (auth = 'bearer', key = 'GET /api/v1/secrets') => ({ auth, key }) as never;
const event = (sourceIp: string | null = '198.51.100.7') => ({ requestContext: { identity: { sourceIp, userAgent: 'unit' } } }) as never;

function principal(tenantId: string, fields: { kind?: Principal['kind']; quota?: Record<string, number>; settings?: Record<string, unknown>; id?: string } = {}): Principal {
  return {
    kind: fields.kind ?? 'api_key',
    tenantId,
    tenant: { id: tenantId, status: 'active', operator: false, quota: fields.quota ?? { requests_per_minute: 100 }, ...(fields.settings ? { settings: fields.settings } : {}) } as never,
    id: fields.id ?? randomUUID(),
    user: 'gate@unit.example',
    scopes: ['secrets:read'],
    operator: false,
  };
}
async function thrown(f: () => Promise<unknown>) {
  try {
    await f();
    return undefined;
  } catch (error) {
    return error;
  }
}

describe('RateLimit headers and the 429', () => {
  const d = { allowed: false, policy: 'account', limit: 60, remaining: 0, resetSeconds: 7 };
  it('headers name the policy, its quota and window, what is left and when', () => {
    expect(g.rateHeaders(d)).toEqual({ 'RateLimit-Policy': '"account";q=60;w=60', RateLimit: '"account";r=0;t=7' });
  });
  it('429 rate_limited with Retry-After and the headers', () => {
    const e = g.rateLimited(d);
    expect(e).toMatchObject({ status: 429, code: 'rate_limited', message: 'too many requests: the account limit is 60 per minute; retry after 7 s' });
    expect(e.options.headers).toEqual({ 'Retry-After': '7', 'RateLimit-Policy': '"account";q=60;w=60', RateLimit: '"account";r=0;t=7' });
  });
  it('the default account rate', () => {
    expect(g.DEFAULT_REQUESTS_PER_MINUTE).toBe(6000);
  });
});

describe('which buckets a request takes', () => {
  it('identify() takes the account bucket at once (counted on the usage item); start() with the same account adds nothing', async () => {
    const tenantId = await t.account();
    const p = principal(tenantId);
    const gate = g.gate(route(), event());
    expect(gate.headers()).toEqual({});
    gate.identify(tenantId, p.id, Promise.resolve(p.tenant));
    gate.identify(tenantId, p.id, Promise.resolve(p.tenant)); // a second call is ignored
    await gate.start(p);
    await gate.enforce();
    const item = await usage(tenantId);
    expect(item).toMatchObject({ requests: 1, rl_cap: 100, rl_tok: 99 });
    // the usage item of the day is kept 400 days (GET /api/v1/usage reads it)
    expect(Math.abs((item!.ttl as number) - (Math.floor(Date.now() / 1000) + 400 * 86_400))).toBeLessThan(120);
    expect(gate.headers()).toEqual({ 'RateLimit-Policy': '"account";q=100;w=60', RateLimit: '"account";r=99;t=1' });
  });

  it('an event without caller identity: no source address, no IP bucket, nothing breaks', async () => {
    const tenantId = await t.account();
    for (const requestContext of [{}, undefined]) {
      const gate = g.gate(route('temp-token'), { requestContext } as never);
      await gate.start(null);
      await gate.enforce();
      expect(gate.headers()).toEqual({});
      const withPrincipal = g.gate(route(), { requestContext } as never);
      await withPrincipal.start(principal(tenantId));
      await withPrincipal.enforce();
    }
  });

  it('while the account is still being read, its stored limit or the default is used; a failed read means the default', async () => {
    const tenantId = await t.account();
    const gate = g.gate(route(), event());
    gate.identify(tenantId, 'k', Promise.reject(new Error('read failed')));
    await gate.start(principal(tenantId)); // the same account: the bucket identify() took
    await gate.enforce();
    expect(await usage(tenantId)).toMatchObject({ rl_cap: 6000, requests: 1 });
    const other = await t.account();
    const second = g.gate(route(), event());
    second.identify(other, 'k', Promise.resolve({ quota: {} } as never));
    await second.start(principal(other));
    expect(await usage(other)).toMatchObject({ rl_cap: 6000, requests: 1 });
  });

  it('an account rate past 150 requests/s is spread over ceil(rate/150) usage items (at most 100), each holding its share', async () => {
    const day = today();
    const items = async (tenantId: string) =>
      (await t.db().send(new QueryCommand({ TableName: t.tableName(), KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)', ExpressionAttributeValues: { ':pk': `METER#${tenantId}`, ':sk': `USAGE#${day}` }, ConsistentRead: true }))).Items ?? [];
    for (const [rpm, shards] of [
      [9_000, 1],
      [9_001, 2],
      [600_000, 67],
      [100_000_000, 100],
    ] as const) {
      const tenantId = await t.account();
      const p = principal(tenantId, { quota: { requests_per_minute: rpm } });
      for (let i = 0; i < 12; i++) {
        const gate = g.gate(route(), event());
        await gate.start(p);
        await gate.enforce();
        expect(gate.headers()['RateLimit-Policy']).toBe(`"account";q=${rpm};w=60`);
      }
      const found = await items(tenantId);
      // 12 admitted; those this process admitted from a lease since its last write are not counted yet (lib/ratelimit/bucket.ts: at most LEASE_MAX - 1), none is counted twice
      const sum = found.reduce((n, i) => n + Number(i.requests), 0);
      expect(sum).toBeGreaterThanOrEqual(12 - (LEASE_MAX - 1));
      expect(sum).toBeLessThanOrEqual(12);
      for (const i of found) {
        expect(i.rl_cap).toBeCloseTo(rpm / shards, 6);
        const n = /^USAGE#\d{4}-\d\d-\d\d(?:#(\d+))?$/.exec(i.sk as string)?.[1];
        expect(Number(n ?? 0)).toBeLessThan(shards);
      }
      if (shards === 1) expect(found.map((i) => i.sk)).toEqual([`USAGE#${day}`]);
      else if (shards >= 50) expect(found.length).toBeGreaterThan(1); // 12 takes over 50+ items land on more than one (all on one: 1 in 50^11)
    }
  });

  it('start() without identify(), or for another account than identified, takes the principal account bucket', async () => {
    const tenantId = await t.account();
    const p = principal(tenantId, { quota: { requests_per_minute: 30 } });
    const gate = g.gate(route(), event());
    await gate.start(p);
    expect(await usage(tenantId)).toMatchObject({ requests: 1, rl_cap: 30 });
    const first = await t.account();
    const second = g.gate(route(), event());
    second.identify(first, 'k', Promise.resolve(undefined));
    await second.start(p);
    expect(await usage(tenantId)).toMatchObject({ requests: 2 });
    // the identified account's take is not awaited by start() (it is another account's): it lands all the same
    await vi.waitFor(async () => expect(await usage(first)).toMatchObject({ requests: 1 }), { timeout: 10_000 });
  });

  it('a per-credential quota below the account rate adds the credential bucket, which binds when it has less left', async () => {
    const tenantId = await t.account();
    const p = principal(tenantId, { quota: { requests_per_minute: 100, requests_per_minute_per_credential: 10 } });
    const gate = g.gate(route(), event());
    await gate.start(p);
    await gate.enforce();
    const item = await usage(tenantId);
    expect(item).toMatchObject({ requests: 1, rl_tok: 99, [`rl_api_key:${p.id}_tok`]: 9, [`rl_api_key:${p.id}_cap`]: 10 });
    expect(gate.headers()).toEqual({ 'RateLimit-Policy': '"credential";q=10;w=60', RateLimit: '"credential";r=9;t=6' });
    for (const q of <Record<string, number>[]>[{ requests_per_minute: 100, requests_per_minute_per_credential: 100 }, { requests_per_minute: 100 }]) {
      const other = await t.account();
      const same = principal(other, { quota: q });
      const { logger } = await import('../../lib/core/logger.js');
      const warn = vi.spyOn(logger, 'warn');
      await g.gate(route(), event()).start(same);
      expect(warn).not.toHaveBeenCalled();
      warn.mockRestore();
      expect(Object.keys((await usage(other))!).filter((k) => k.startsWith('rl_api_key'))).toEqual([]);
    }
  });

  it('the exhausted bucket refuses: 429 with its headers, and headers() reports it', async () => {
    const tenantId = await t.account();
    const p = principal(tenantId, { quota: { requests_per_minute: 100, requests_per_minute_per_credential: 1 } });
    await g.gate(route(), event()).start(p);
    const gate = g.gate(route(), event());
    await gate.start(p);
    const error = await thrown(() => gate.enforce());
    expect(error).toMatchObject({ status: 429, code: 'rate_limited' });
    // one token a minute: back in 60 s, or 59 if the clock crossed a second in between
    const headers = (error as { options: { headers: Record<string, string> } }).options.headers;
    const wait = Number(headers['Retry-After']);
    expect([59, 60]).toContain(wait);
    expect(headers).toMatchObject({ RateLimit: `"credential";r=0;t=${wait}` });
    expect(gate.headers()).toEqual({ 'RateLimit-Policy': '"credential";q=1;w=60', RateLimit: `"credential";r=0;t=${wait}` });
  });

  it('routes without a principal are limited by source IP, except public routes and requests without an address', async () => {
    const ip = `203.0.113.${Math.floor(Math.random() * 250)}-${randomUUID().slice(0, 6)}`;
    const gate = g.gate(route('temp-token'), event(ip));
    await gate.start(null);
    await gate.enforce();
    expect(await t.get({ pk: `IP#${ip}`, sk: 'RATE' })).toMatchObject({ rl_cap: 6000, rl_tok: 5999 });
    expect(gate.headers()).toEqual({ 'RateLimit-Policy': '"ip";q=6000;w=60', RateLimit: '"ip";r=5999;t=1' });
    const pub = `pub-${randomUUID()}`;
    const open = g.gate(route('public'), event(pub));
    await open.start(null);
    await open.enforce();
    expect(await t.get({ pk: `IP#${pub}`, sk: 'RATE' })).toBeUndefined();
    expect(open.headers()).toEqual({});
    const anonymous = g.gate(route('temp-token'), event(null));
    await anonymous.start(null);
    await anonymous.enforce();
    expect(anonymous.headers()).toEqual({});
  });

  it('fails open: a table error admits the request without headers (and start() does not reject)', async () => {
    const tenantId = await t.account();
    undo.push(
      intercept(t.db(), (command, input) => {
        if (command === 'UpdateItemCommand' && input.Key?.pk === keys.usageDay(tenantId, today()).pk) throw new Error('table unavailable');
        return undefined;
      }),
    );
    const { logger } = await import('../../lib/core/logger.js');
    const warn = vi.spyOn(logger, 'warn');
    const gate = g.gate(route(), event());
    await expect(gate.start(principal(tenantId))).resolves.toBeUndefined();
    await expect(gate.enforce()).resolves.toBeUndefined();
    expect(gate.headers()).toEqual({});
    expect(warn).toHaveBeenCalledWith('rate limit check failed; request admitted', { error: expect.objectContaining({ message: 'table unavailable' }) });
    warn.mockRestore();
  });
});

describe('the API-key IP allow-list', () => {
  const settings = { api_key_ip_allowlist: ['192.0.2.0/24', '2001:db8::1'] };
  it('an API key from outside the list: 403 ip_not_allowed; from inside: admitted', async () => {
    const tenantId = await t.account();
    const outside = g.gate(route(), event('198.51.100.1'));
    await outside.start(principal(tenantId, { settings }));
    expect(await thrown(() => outside.enforce())).toMatchObject({
      status: 403,
      code: 'ip_not_allowed',
      message: 'this account accepts its API keys only from the IP addresses of its allow-list',
    });
    for (const ip of ['192.0.2.77', '2001:db8::1']) {
      const inside = g.gate(route(), event(ip));
      await inside.start(principal(tenantId, { settings }));
      await expect(inside.enforce()).resolves.toBeUndefined();
    }
  });
  it('applies to API keys only', async () => {
    const tenantId = await t.account();
    const gate = g.gate(route(), event('198.51.100.1'));
    await gate.start(principal(tenantId, { settings, kind: 'user_token' }));
    await expect(gate.enforce()).resolves.toBeUndefined();
  });
});

describe('audit of denied requests', () => {
  async function auditOf(tenantId: string) {
    const { QueryCommand } = await import('@aws-sdk/lib-dynamodb');
    const out = await t.db().send(
      new QueryCommand({ TableName: t.tableName(), KeyConditionExpression: 'pk = :p AND begins_with(sk, :s)', ExpressionAttributeValues: { ':p': `T#${tenantId}`, ':s': 'AUDIT#' }, ConsistentRead: true }),
    );
    return out.Items ?? [];
  }

  it('a 403 of an authenticated caller: one entry, outcome denied, the route and the code', async () => {
    const tenantId = await t.account();
    const p = principal(tenantId);
    const gate = g.gate(route('bearer', 'DELETE /api/v1/secrets/{name}'), event());
    await gate.start(p);
    await gate.auditDenied(errors.forbidden('no', 'insufficient_scope'), 'req-1');
    const [entry, ...rest] = await auditOf(tenantId);
    expect(rest).toEqual([]);
    expect(entry).toMatchObject({ action: 'access.denied', outcome: 'denied', resource: { type: 'route', id: 'DELETE /api/v1/secrets/{name}' }, detail: { code: 'insufficient_scope' }, request_id: 'req-1' });
    expect(entry).toMatchObject({ source_ip: '198.51.100.7', user_agent: 'unit' });
  });

  it('nothing for other errors, or without a principal; a failing audit write is swallowed', async () => {
    const tenantId = await t.account();
    const gate = g.gate(route(), event());
    await gate.start(principal(tenantId));
    await gate.auditDenied(errors.unauthorized(), 'r');
    await gate.auditDenied(errors.notFound(), 'r');
    await gate.auditDenied(new Error('403'), 'r');
    const { logger } = await import('../../lib/core/logger.js');
    const warn = vi.spyOn(logger, 'warn');
    const anonymous = g.gate(route(), event());
    await anonymous.start(null);
    await anonymous.auditDenied(errors.forbidden(), 'r');
    expect(await auditOf(tenantId)).toEqual([]);
    expect(warn).not.toHaveBeenCalled(); // nothing was even attempted
    undo.push(
      intercept(t.db(), (command, input) => {
        if ((input.Key ?? input.Item)?.pk === `T#${tenantId}` && String((input.Key ?? input.Item)?.sk).startsWith('AUDIT#')) throw new Error('audit down');
        return undefined;
      }),
    );
    await expect(gate.auditDenied(errors.forbidden(), 'r')).resolves.toBeUndefined();
    expect(warn).toHaveBeenCalledWith('audit of a denied request failed', { request_id: 'r', error: expect.objectContaining({ message: 'audit down' }) });
    warn.mockRestore();
  });
});

describe('withHeaders', () => {
  const h = { RateLimit: '"account";r=1;t=2' };
  it('adds the headers to an error (its own headers win), keeping status, code, message and details', () => {
    const e = errors.unauthorized();
    const out = g.withHeaders(e, h) as errors.HttpError;
    expect(out).not.toBe(e);
    expect(out).toMatchObject({ status: 401, code: 'unauthorized', message: e.message });
    expect(out.options.headers).toEqual({ RateLimit: '"account";r=1;t=2', 'WWW-Authenticate': 'Bearer' });
    const own = g.withHeaders(new errors.HttpError(400, 'c', 'm', { headers: { RateLimit: 'own' }, details: [{ path: 'p', message: 'x' }] }), h) as errors.HttpError;
    expect(own.options).toEqual({ headers: { RateLimit: 'own' }, details: [{ path: 'p', message: 'x' }] });
  });
  it('leaves a 429 (it has its own), a non-HTTP error, and no headers alone', () => {
    const limited = errors.tooManyRequests(1);
    expect(g.withHeaders(limited, h)).toBe(limited);
    const plain = new Error('x');
    expect(g.withHeaders(plain, h)).toBe(plain);
    const e = errors.forbidden();
    expect(g.withHeaders(e, {})).toBe(e);
  });
});

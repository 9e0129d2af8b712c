import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { addressProblem } from '../../lib/events/ssrf.js';
import { api, canary, errorCode, newAccount, unique, type TestAccount } from '../helpers/api.js';
import { allowLoopback, createWebhook, deliveries, eventually, receiver, setQuota, type Receiver } from './webhooks.helpers.js';

const receivers: Receiver[] = [];
const open = async (...args: Parameters<typeof receiver>) => {
  const r = await receiver(...args);
  receivers.push(r);
  return r;
};
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
});

let acct: TestAccount;
beforeAll(async () => {
  acct = await newAccount('wh');
  await allowLoopback(acct, { max_attempts: 3, timeout_seconds: 5 });
});

describe('POST /api/v1/webhooks', () => {
  it('creates a webhook and shows the signing secret once', async () => {
    const r = await open();
    const res = await api('POST', '/api/v1/webhooks', { key: acct.adminKey, body: { url: r.url, events: ['secret.*'], description: 'ci' } });
    expect(res.status).toBe(201);
    const wh = res.body.data.webhook;
    expect(wh).toMatchObject({ url: r.url, events: ['secret.*'], description: 'ci', enabled: true });
    expect(wh.signing_secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const list = await api('GET', '/api/v1/webhooks', { key: acct.adminKey });
    expect(list.status).toBe(200);
    const listed = list.body.data.webhooks.find((w: { id: string }) => w.id === wh.id);
    expect(listed).toMatchObject({ id: wh.id, url: r.url });
    expect(list.text).not.toContain(wh.signing_secret);
    expect(listed.signing_secret).toBeUndefined();
  });

  it('400 on unknown fields, wrong types and bad values', async () => {
    const r = await open();
    for (const body of [
      { url: r.url, events: ['secret.*'], extra: 1 },
      { url: 42, events: ['secret.*'] },
      { url: r.url, events: [] },
      { url: r.url, events: ['no.such_event'] },
      { url: r.url, events: ['secret.*'], enabled: 'yes' },
      { url: r.url },
    ]) {
      const res = await api('POST', '/api/v1/webhooks', { key: acct.adminKey, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(errorCode(res)).toBe('validation_failed');
    }
  });

  it('403 without webhooks:manage', async () => {
    const key = await acct.key(['secrets:read']);
    const res = await api('POST', '/api/v1/webhooks', { key, body: { url: 'https://example.com/h', events: ['*'] } });
    expect(res.status).toBe(403);
    expect(errorCode(res)).toBe('insufficient_scope');
  });
});

describe('SSRF guard (loopback allowance off)', () => {
  let plain: TestAccount;
  beforeAll(async () => {
    plain = await newAccount('ssrf');
  });

  it('refuses loopback, private, link-local, CGNAT, unspecified and metadata addresses, bad schemes and credentials', async () => {
    const urls = [
      'http://127.0.0.1/hook',
      'http://localhost/hook',
      'http://[::1]/hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://10.0.0.1/hook',
      'http://172.16.0.1/hook',
      'http://192.168.1.1/hook',
      'http://169.254.169.254/latest/meta-data/',
      'http://100.64.0.1/hook',
      'http://0.0.0.0/hook',
      'http://[fd00:ec2::254]/hook',
      'http://2130706433/hook',
      'file:///etc/passwd',
      'ftp://example.com/hook',
      'http://user:pass@example.com/hook',
    ];
    for (const url of urls) {
      const res = await api('POST', '/api/v1/webhooks', { key: plain.adminKey, body: { url, events: ['*'] } });
      const who = `POST /api/v1/webhooks as the account admin's key (loopback allowance off), url ${url}: got ${res.status} ${res.body?.code ?? ''}`;
      expect(res.status, who).toBe(400);
      expect(errorCode(res), who).toBe('webhook_url_refused');
    }
  });

  it('refuses a host name that resolves to a non-public address', async () => {
    // the machine's own name resolves through the system resolver (here /etc/hosts)
    const candidates = [hostname(), 'localhost'];
    let name: string | undefined;
    for (const c of candidates) {
      const addrs = await lookup(c, { all: true }).catch(() => []);
      if (addrs.length > 0 && addrs.some((a) => addressProblem(a.address, false) !== null)) {
        name = c;
        break;
      }
    }
    expect(name).toBeDefined();
    const res = await api('POST', '/api/v1/webhooks', { key: plain.adminKey, body: { url: `http://${name}:9/hook`, events: ['*'] } });
    const who = `POST /api/v1/webhooks as the account admin's key (loopback allowance off), url http://${name}:9/hook: got ${res.status} ${res.body?.code ?? ''}`;
    expect(res.status, who).toBe(400);
    expect(res.body.error, who).toMatch(/resolves to|loopback/);
  });

  it('does not follow a 302 to a private address, and records it', async () => {
    const target = await open();
    const redirecting = await open(() => ({ status: 302, headers: { location: target.url } }));
    const wh = await createWebhook(acct, { url: redirecting.url, events: ['webhook.test'] });
    const sent = await api('POST', `/api/v1/webhooks/${wh.id}/test`, { key: acct.adminKey, body: {} });
    expect(sent.status).toBe(202);
    const dead = await eventually(
      async () => (await deliveries(acct, wh.id)).find((d) => d.status === 'dead'),
      'the redirected delivery to end in the DLQ',
    );
    expect(dead.attempts.length).toBe(3);
    for (const a of dead.attempts) {
      expect(a.status_code).toBe(302);
      expect(a.error).toMatch(/redirect not followed/);
    }
    expect(redirecting.received.length).toBe(3);
    expect(target.received.length).toBe(0);
  });

  it('checks again at delivery: a receiver allowed at creation is refused once the address is not', async () => {
    const other = await newAccount('rebind');
    await allowLoopback(other, { max_attempts: 1 });
    const r = await open();
    const wh = await createWebhook(other, { url: r.url, events: ['webhook.test'] });
    const off = await api('PUT', '/api/v1/settings', { key: other.adminKey, body: { webhooks: { allow_loopback: false, max_attempts: 1 } } });
    expect(off.status).toBe(200);
    await api('POST', `/api/v1/webhooks/${wh.id}/test`, { key: other.adminKey, body: {} });
    const dead = await eventually(async () => (await deliveries(other, wh.id)).find((d) => d.status === 'dead'), 'a refused delivery');
    expect(dead.attempts[0]!.error).toMatch(/destination not allowed: .*loopback/);
    expect(dead.attempts[0]!.status_code).toBeNull();
    expect(r.received.length).toBe(0);
  });
});

describe('delivery pipeline', () => {
  it('a change produces a signed delivery that verifies with the Standard Webhooks algorithm, without the secret value', async () => {
    const r = await open();
    const wh = await createWebhook(acct, { url: r.url, events: ['secret.created'] });
    const value = canary('wh');
    const name = unique('wh-secret');
    const made = await api('POST', '/api/v1/secrets', { key: acct.adminKey, body: { name, data: { password: value } } });
    expect(made.status).toBe(201);
    const got = await eventually(async () => r.received.find((x) => x.body.includes(name)), 'the secret.created delivery');
    const payload = new Webhook(wh.signing_secret).verify(got.body, {
      'webhook-id': got.headers['webhook-id'] as string,
      'webhook-timestamp': got.headers['webhook-timestamp'] as string,
      'webhook-signature': got.headers['webhook-signature'] as string,
    }) as { id: string; type: string; data: Record<string, unknown>; tenant_id: string };
    expect(payload.type).toBe('secret.created');
    expect(payload.id).toBe(got.headers['webhook-id']);
    expect(payload.tenant_id).toBe(acct.tenantId);
    expect(payload.data).toMatchObject({ name });
    expect(got.body).not.toContain(value);
    expect(got.body).not.toMatch(/CANARY-/);
    // a tampered body does not verify
    expect(() =>
      new Webhook(wh.signing_secret).verify(got.body.replace(name, `${name}x`), {
        'webhook-id': got.headers['webhook-id'] as string,
        'webhook-timestamp': got.headers['webhook-timestamp'] as string,
        'webhook-signature': got.headers['webhook-signature'] as string,
      }),
    ).toThrow();
    const list = await eventually(async () => {
      const d = (await deliveries(acct, wh.id)).find((x) => x.id === payload.id);
      return d?.status === 'succeeded' ? d : undefined;
    }, 'the delivery record');
    expect(list).toMatchObject({ event_type: 'secret.created', attempt_count: 1, next_retry_at: null, dead_lettered_at: null });
    expect(list.attempts[0]).toMatchObject({ attempt: 1, error: null });
    expect(list.attempts[0]!.status_code).toBe(204);
    expect(list.attempts[0]!.latency_ms).toBeGreaterThanOrEqual(0);
  });

  it('a receiver returning 500 gets retries with the same webhook-id, then the delivery is dead-lettered', async () => {
    const r = await open(() => ({ status: 500 }));
    const wh = await createWebhook(acct, { url: r.url, events: ['webhook.test'] });
    const sent = await api('POST', `/api/v1/webhooks/${wh.id}/test`, { key: acct.adminKey, body: {} });
    expect(sent.status).toBe(202);
    const eventId = sent.body.data.event_id as string;
    const dead = await eventually(async () => (await deliveries(acct, wh.id)).find((d) => d.id === eventId && d.status === 'dead'), 'the DLQ entry');
    expect(dead.attempt_count).toBe(3);
    expect(dead.attempts.map((a) => a.status_code)).toEqual([500, 500, 500]);
    expect(dead.attempts.map((a) => a.attempt)).toEqual([1, 2, 3]);
    expect(dead.dead_lettered_at).not.toBeNull();
    expect(r.received.map((x) => x.headers['webhook-id'])).toEqual([eventId, eventId, eventId]);
    // attempts are spaced by the backoff: each after the previous one
    const times = dead.attempts.map((a) => Date.parse(a.at));
    expect(times[1]!).toBeGreaterThan(times[0]!);
    expect(times[2]!).toBeGreaterThan(times[1]!);
  });

  it('a receiver that recovers gets the event accepted exactly once per webhook-id', async () => {
    const accepted = new Map<string, number>();
    const r = await open((n, req) => {
      if (n <= 2) return { status: 503 };
      const id = req.headers['webhook-id'] as string;
      accepted.set(id, (accepted.get(id) ?? 0) + 1);
      return { status: 200 };
    });
    const wh = await createWebhook(acct, { url: r.url, events: ['webhook.test'] });
    const sent = await api('POST', `/api/v1/webhooks/${wh.id}/test`, { key: acct.adminKey, body: {} });
    const eventId = sent.body.data.event_id as string;
    const done = await eventually(
      async () => (await deliveries(acct, wh.id)).find((d) => d.id === eventId && d.status === 'succeeded'),
      'the recovered delivery',
    );
    expect(done.attempts.map((a) => a.status_code)).toEqual([503, 503, 200]);
    // a later event must not bring the first one again
    const second = await api('POST', `/api/v1/webhooks/${wh.id}/test`, { key: acct.adminKey, body: {} });
    await eventually(
      async () => (await deliveries(acct, wh.id)).find((d) => d.id === second.body.data.event_id && d.status === 'succeeded'),
      'the second delivery',
    );
    expect([...accepted.entries()].sort()).toEqual(
      [
        [eventId, 1],
        [second.body.data.event_id, 1],
      ].sort(),
    );
    expect(r.received.length).toBe(4);
  });

  it('POST /{id}/test reaches only that webhook', async () => {
    const a = await open();
    const b = await open();
    const whA = await createWebhook(acct, { url: a.url, events: ['*'] });
    await createWebhook(acct, { url: b.url, events: ['*'] });
    const sent = await api('POST', `/api/v1/webhooks/${whA.id}/test`, { key: acct.adminKey });
    expect(sent.status).toBe(202);
    expect(sent.body.data).toMatchObject({ webhook_id: whA.id });
    const got = await eventually(async () => a.received.find((x) => x.headers['webhook-id'] === sent.body.data.event_id), 'the test delivery');
    expect(JSON.parse(got.body)).toMatchObject({ type: 'webhook.test', data: { webhook_id: whA.id } });
    expect(b.received.some((x) => x.headers['webhook-id'] === sent.body.data.event_id)).toBe(false);
  });
});

describe('cross-account and validation', () => {
  it('another account sees 404 for deliveries and test, and not the webhook in its list', async () => {
    const r = await open();
    const wh = await createWebhook(acct, { url: r.url, events: ['*'] });
    const other = await newAccount('wh-other');
    const d = await api('GET', `/api/v1/webhooks/${wh.id}/deliveries`, { key: other.adminKey });
    expect(d.status).toBe(404);
    expect(errorCode(d)).toBe('not_found');
    const t = await api('POST', `/api/v1/webhooks/${wh.id}/test`, { key: other.adminKey, body: {} });
    expect(t.status).toBe(404);
    const missing = await api('GET', '/api/v1/webhooks/00000000-0000-7000-8000-000000000009/deliveries', { key: acct.adminKey });
    expect(missing.status).toBe(404);
    expect(d.text.replace(/"request_id":"[^"]+"/, '')).toBe(missing.text.replace(/"request_id":"[^"]+"/, ''));
    const list = await api('GET', '/api/v1/webhooks', { key: other.adminKey });
    expect(list.body.data.webhooks).toEqual([]);
  });

  it('400 on a bad id, a bad limit, a bad cursor and a body on test', async () => {
    expect((await api('GET', '/api/v1/webhooks/not-a-uuid/deliveries', { key: acct.adminKey })).status).toBe(400);
    const r = await open();
    const wh = await createWebhook(acct, { url: r.url, events: ['*'] });
    expect((await api('GET', `/api/v1/webhooks/${wh.id}/deliveries?limit=0`, { key: acct.adminKey })).status).toBe(400);
    expect((await api('GET', `/api/v1/webhooks/${wh.id}/deliveries?cursor=zzz`, { key: acct.adminKey })).status).toBe(400);
    expect((await api('POST', `/api/v1/webhooks/${wh.id}/test`, { key: acct.adminKey, body: { event: 'x' } })).status).toBe(400);
  });
});

describe('quota', () => {
  it('max_webhooks holds under 20 concurrent creates and usage counts exactly', async () => {
    const a = await newAccount('whq');
    await allowLoopback(a);
    await setQuota(a.tenantId, { max_webhooks: 10 });
    const r = await open();
    const results = await Promise.all(
      Array.from({ length: 20 }, () => api('POST', '/api/v1/webhooks', { key: a.adminKey, body: { url: r.url, events: ['*'] } })),
    );
    const statuses = results.map((x) => x.status);
    expect(statuses.filter((s) => s === 201).length).toBe(10);
    for (const x of results.filter((y) => y.status !== 201)) {
      expect(x.status).toBe(403);
      expect(errorCode(x)).toBe('quota_exceeded');
    }
    const usage = await api('GET', '/api/v1/usage', { key: a.adminKey });
    expect(usage.body.data.webhooks).toEqual({ used: 10, limit: 10 });
    const list = await api('GET', '/api/v1/webhooks', { key: a.adminKey });
    expect(list.body.data.webhooks.length).toBe(10);
  });
});

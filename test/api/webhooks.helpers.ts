import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { expect } from 'vitest';
import { api, rootKey, type TestAccount } from '../helpers/api.js';

export interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly path: string;
}

export interface Receiver {
  readonly url: string;
  readonly received: Received[];
  close(): Promise<void>;
}

/**
 * A real HTTP receiver on 127.0.0.1. `respond(n, req)` picks the answer to the n-th request
 * (1-based): a status, and optional headers (e.g. a Location for a redirect).
 */
export async function receiver(
  respond: (n: number, r: Received) => { status: number; headers?: Record<string, string> } = () => ({ status: 204 }),
): Promise<Receiver> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), path: req.url ?? '/' };
      received.push(r);
      const answer = respond(received.length, r);
      res.writeHead(answer.status, answer.headers);
      res.end();
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

/** Polls `check` until it returns a value (not undefined) or the deadline passes. */
export async function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 20_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** Lets the account use loopback receivers (a development-only setting) and sets its retry policy. */
export async function allowLoopback(account: TestAccount, webhooks: Record<string, unknown> = {}): Promise<void> {
  const res = await api('PUT', '/api/v1/settings', { key: account.adminKey, body: { webhooks: { allow_loopback: true, ...webhooks } } });
  expect(res.status, res.text).toBe(200);
}

export async function createWebhook(account: TestAccount, body: Record<string, unknown>) {
  const res = await api('POST', '/api/v1/webhooks', { key: account.adminKey, body });
  expect(res.status, res.text).toBe(201);
  return res.body.data.webhook as { id: string; url: string; signing_secret: string; events: string[] };
}

export async function deliveries(account: TestAccount, webhookId: string) {
  const res = await api('GET', `/api/v1/webhooks/${webhookId}/deliveries`, { key: account.adminKey });
  expect(res.status, res.text).toBe(200);
  return res.body.data.deliveries as {
    id: string;
    event_type: string;
    status: string;
    attempt_count: number;
    attempts: { attempt: number; status_code: number | null; latency_ms: number; error: string | null; at: string }[];
    next_retry_at: string | null;
    dead_lettered_at: string | null;
  }[];
}

export async function setQuota(tenantId: string, quota: Record<string, number>): Promise<void> {
  const res = await api('PUT', `/api/v1/admin/tenants/${tenantId}/quota`, { key: rootKey(), body: quota });
  expect(res.status, res.text).toBe(200);
}

import { connect } from 'node:net';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { api, baseUrl, canary, errorCode, newAccount, unique, type TestAccount } from '../helpers/api.js';
import { useRuntimeConfig } from '../helpers/in-process.js';

/**
 * HTTP as other clients speak it: the Authorization scheme in any case (RFC 9110 §11.1),
 * every audit actor type a filter can name, the local gateway's answers to requests Node's
 * parser refuses, and error messages that say what to send instead.
 */
let a: TestAccount;
beforeAll(async () => {
  a = await newAccount('interop-http');
});

/** One raw HTTP/1.1 exchange over TCP (what fetch cannot send): the status line, headers and body. */
function raw(request: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const { hostname, port } = new URL(baseUrl());
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(request));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
  });
}

describe('the Authorization scheme', () => {
  it('"bearer", "BEARER" and "Bearer" all authenticate', async () => {
    for (const scheme of ['bearer', 'BEARER', 'Bearer', 'bEaReR']) {
      const res = await api('GET', '/api/v1/secrets', { headers: { authorization: `${scheme} ${a.adminKey}` } });
      expect(res.status, `${scheme}: ${res.text}`).toBe(200);
    }
    const basic = await api('GET', '/api/v1/secrets', { headers: { authorization: `Basic ${a.adminKey}` } });
    expect(basic.status).toBe(401);
  });
});

describe('audit filters name every actor type that entries carry', () => {
  it('system (the sweeper), temp_token (a redemption) and api_token entries are found by actor_type; an unknown type lists the valid ones', async () => {
    useRuntimeConfig();
    const { commit } = await import('../../lib/audit/audit.js');
    const { getTenant } = await import('../../lib/store/tenants.js');
    const tenant = (await getTenant(a.tenantId))!;
    // the lease sweeper's principal (lib/database/sweeper.ts)
    const system = { kind: 'system', tenantId: a.tenantId, tenant, id: 'lease-sweeper', user: null, scopes: [], operator: false } as never;
    await commit({ principal: system, requestId: 'interop-http', sourceIp: null, userAgent: null }, a.tenantId, [], {
      action: 'database.lease.expire',
      resource: { type: 'database_lease', id: 'lease-x', name: 'lease-x' },
    });
    const made = await api('POST', '/api/v1/secrets', { key: a.adminKey, body: { name: unique('t'), data: { value: canary('t') } } });
    const grant = await api('POST', `/api/v1/secret/${made.body.data.secret.id}/temp-access`, { key: a.adminKey, body: { duration_seconds: 600 } });
    expect(grant.status, grant.text).toBe(201);
    expect((await api('GET', new URL(grant.body.data.url).pathname)).status).toBe(200);

    const reader = await a.key(['audit:read']);
    for (const [type, action] of [
      ['system', 'database.lease.expire'],
      ['temp_token', 'temp_access.redeem'],
    ] as const) {
      const res = await api('GET', `/api/v1/audit/logs?actor_type=${type}`, { key: reader });
      expect(res.status, res.text).toBe(200);
      const entries = res.body.data.entries as { actor: { type: string }; action: string }[];
      expect(entries.length).toBeGreaterThan(0);
      expect(entries.every((e) => e.actor.type === type)).toBe(true);
      expect(entries.map((e) => e.action)).toContain(action);
    }
    expect((await api('GET', '/api/v1/audit/logs?actor_type=api_token', { key: reader })).status).toBe(200);
    const bad = await api('GET', '/api/v1/audit/logs?actor_type=robot', { key: reader });
    expect(bad.status).toBe(400);
    expect(bad.body.details[0].message).toMatch(/system/);
  });
});

/**
 * The local gateway's own answers (scripts/local/gateway.ts). As deployed, API Gateway answers
 * these itself (its gateway responses, infra/): the artifact project does not run them.
 */
const localGateway = inject('runtime') !== 'artifact';

describe.runIf(localGateway)("requests Node's HTTP parser refuses get the envelope and a request id", () => {
  it('431 for oversized headers', async () => {
    const res = await raw(`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(res.status).toBe(431);
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(res.body)).toEqual({
      success: false,
      error: 'request header fields too large: send smaller headers',
      code: 'headers_too_large',
      request_id: res.headers['x-request-id'],
    });
  });

  it('400 for an unknown method', async () => {
    const res = await raw('FROB /health HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(res.status).toBe(400);
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(res.body)).toMatchObject({ success: false, code: 'bad_request', error: 'malformed request: unknown HTTP method' });
  });
});

describe('error messages say what to send', () => {
  it('a malformed If-Match names the expected form', async () => {
    const name = unique('im');
    const made = await api('POST', '/api/v1/secrets', { key: a.adminKey, body: { name, data: { value: canary('im') } } });
    const etag = made.headers.get('etag')!;
    const res = await api('PUT', `/api/v1/secrets/${name}`, { key: a.adminKey, headers: { 'if-match': 'version-1' }, body: { description: 'x' } });
    expect(res.status).toBe(412);
    expect(errorCode(res)).toBe('precondition_failed');
    expect(res.body.error).toBe(
      `malformed ETag in If-Match: expected the ETag header of a GET, "<id>.<version>" with its quotes (e.g. ${etag}), or *; got "version-1"`,
    );
  });

  it('an unknown scope names the nearest valid one, or lists them', async () => {
    const typo = await api('POST', '/api/v1/api-keys', { key: a.adminKey, body: { name: unique('k'), scopes: ['secret:read'] } });
    expect(typo.status).toBe(400);
    expect(typo.body.details[0].message).toBe('unknown scope "secret:read": did you mean "secrets:read"?');
    const far = await api('POST', '/api/v1/api-keys', { key: a.adminKey, body: { name: unique('k'), scopes: ['everything'] } });
    expect(far.body.details[0].message).toMatch(/^unknown scope "everything": valid scopes are .*secrets:read/);
    const token = await api('POST', '/api/v1/api-tokens', { key: a.adminKey, body: { name: unique('t'), scopes: ['audit:reed'] } });
    expect(token.status).toBe(400);
    expect(JSON.stringify(token.body.details)).toContain('did you mean \\"audit:read\\"?');
  });

  it.runIf(localGateway)(
    'a path that differs only in case names the right one (the local gateway; API Gateway answers unknown paths itself)',
    async () => {
      const res = await api('GET', '/api/v1/Secrets', { key: a.adminKey });
      expect(res.status).toBe(404);
      expect(errorCode(res)).toBe('route_not_found');
      expect(res.body.error).toBe('no route matches this path; paths are case-sensitive: did you mean /api/v1/secrets?');
      const nested = await api('GET', '/API/V1/Jks-Keystores/abc/Entries', { key: a.adminKey });
      expect(nested.body.error).toBe('no route matches this path; paths are case-sensitive: did you mean /api/v1/jks-keystores/abc/entries?');
      const none = await api('GET', '/api/v1/no-such-thing', { key: a.adminKey });
      expect(none.body.error).toBe('no route matches this path');
    },
  );
});

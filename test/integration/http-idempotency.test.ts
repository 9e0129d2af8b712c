import { createHash, randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { table } from './table.js';
import * as http from '../../lib/http/index.js';
import * as apiKeys from '../../lib/auth/api-keys.js';
import { db } from '../../lib/store/client.js';
import { withTenant } from '../../lib/tenancy/scope.js';

/**
 * lib/http/idempotency.ts through defineHandler, against the suite's table: the first
 * request runs and its response is kept sealed; a retry replays it; another request with
 * the same key, or one still running, is a 409; an error releases the key.
 */
let t: Awaited<ReturnType<typeof table>>;

beforeAll(async () => {
  t = await table();
});

async function credential() {
  const tenantId = await t.account();
  const { key } = apiKeys.generateApiKey();
  const keyId = randomUUID();
  await t.put({ pk: `KEY#${apiKeys.hashApiKey(key)}`, sk: 'KEY', tenant_id: tenantId, key_id: keyId, scopes: ['admin:*'], created_by: null, expires_at: null });
  return { tenantId, keyId, key };
}
const idemItem = (tenantId: string, keyId: string, idem: string) => ({ pk: `T#${tenantId}`, sk: `IDEM#${createHash('sha256').update(`api_key:${keyId}:${idem}`).digest('hex')}` });

function event(method: string, resource: string, key: string, fields: Partial<APIGatewayProxyEvent> & { idem?: string } = {}): APIGatewayProxyEvent {
  const { idem, ...rest } = fields;
  return {
    httpMethod: method,
    resource,
    path: resource,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(idem !== undefined ? { 'Idempotency-Key': idem } : {}) },
    multiValueHeaders: {},
    pathParameters: null,
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    stageVariables: null,
    body: '{"name":"a"}',
    isBase64Encoded: false,
    requestContext: { requestId: randomUUID(), identity: { sourceIp: '192.0.2.1' } } as never,
    ...rest,
  };
}
const ctx = { awsRequestId: 'x' } as never;
const json = (r: { body: string }) => JSON.parse(r.body);

describe('Idempotency-Key', () => {
  it('a retry with the same key and request replays the first response without running again', async () => {
    const { key, tenantId, keyId } = await credential();
    let n = 0;
    const h = http.defineHandler({ handler: async () => http.created({ n: ++n, secret: 'CANARY-idem' }, { ETag: '"1"' }) });
    const first = await h(event('POST', '/api/v1/secrets', key, { idem: 'k-1' }), ctx);
    expect(first.statusCode).toBe(201);
    expect(first.headers!['Idempotent-Replayed']).toBeUndefined();
    const again = await h(event('POST', '/api/v1/secrets', key, { idem: 'k-1' }), ctx);
    expect(again.statusCode).toBe(201);
    expect(json(again)).toEqual({ success: true, data: { n: 1, secret: 'CANARY-idem' } });
    expect(again.headers).toMatchObject({ ETag: '"1"', 'Idempotent-Replayed': 'true', 'X-Request-Id': first.headers!['X-Request-Id'] });
    expect(n).toBe(1);
    // kept sealed, for 24 hours
    const item = await t.get(idemItem(tenantId, keyId, 'k-1'));
    expect(item).toMatchObject({ state: 'done' });
    expect(Buffer.from(item!.response as Uint8Array).toString('latin1')).not.toContain('CANARY-idem');
    const ttl = item!.ttl as number;
    expect(Math.abs(ttl - (Math.floor(Date.now() / 1000) + 86_400))).toBeLessThan(60);
    // sealed under the record's own scope: the idempotency record of this credential and key
    const { openJson } = await import('../../lib/crypto/envelope.js');
    const hash = createHash('sha256').update(`api_key:${keyId}:k-1`).digest('hex');
    expect(await openJson({ tenantId, type: 'idempotency', id: hash, version: 1 }, item!.response as Uint8Array)).toMatchObject({ statusCode: 201 });
    // another key runs again
    await h(event('POST', '/api/v1/secrets', key, { idem: 'k-2' }), ctx);
    expect(n).toBe(2);
    // a request without a body is replayed too
    await h(event('DELETE', '/api/v1/secrets/{name}', key, { idem: 'k-3', body: null, pathParameters: { name: 'x' } }), ctx);
    const replay = await h(event('DELETE', '/api/v1/secrets/{name}', key, { idem: 'k-3', body: null, pathParameters: { name: 'x' } }), ctx);
    expect(replay.headers!['Idempotent-Replayed']).toBe('true');
    expect(n).toBe(3);
  });

  it('the same key with another request (method, path parameters, query or body): 409 idempotency_key_reused', async () => {
    const { key } = await credential();
    const h = http.defineHandler({ handler: async () => http.ok({}) });
    await h(event('PUT', '/api/v1/secrets/{name}', key, { idem: 'same', pathParameters: { name: 'a' }, queryStringParameters: { q: '1' } }), ctx);
    const variants: Partial<APIGatewayProxyEvent>[] = [
      { pathParameters: { name: 'b' }, queryStringParameters: { q: '1' } },
      { pathParameters: { name: 'a' }, queryStringParameters: { q: '2' } },
      { pathParameters: { name: 'a' }, queryStringParameters: { q: '1' }, body: '{"name":"b"}' },
    ];
    for (const v of variants) {
      const res = await h(event('PUT', '/api/v1/secrets/{name}', key, { idem: 'same', ...v }), ctx);
      expect(res.statusCode).toBe(409);
      expect(json(res)).toMatchObject({ code: 'idempotency_key_reused', error: 'this Idempotency-Key was used with a different request' });
    }
    const other = await h(event('DELETE', '/api/v1/secrets/{name}', key, { idem: 'same', pathParameters: { name: 'a' }, queryStringParameters: { q: '1' } }), ctx);
    expect(json(other).code).toBe('idempotency_key_reused');
  });

  it('while the first is still running: 409 idempotency_in_progress', async () => {
    const { key } = await credential();
    let release!: () => void;
    let started!: () => void;
    const gate = new Promise<void>((ok) => (release = ok));
    const running = new Promise<void>((ok) => (started = ok));
    const h = http.defineHandler({
      async handler() {
        started();
        await gate;
        return http.ok({ done: true });
      },
    });
    const first = h(event('POST', '/api/v1/secrets', key, { idem: 'slow' }), ctx);
    await running; // the first request holds the key and runs
    const second = await h(event('POST', '/api/v1/secrets', key, { idem: 'slow' }), ctx);
    expect(second.statusCode).toBe(409);
    expect(json(second)).toMatchObject({ code: 'idempotency_in_progress', error: 'a request with this Idempotency-Key is still in progress' });
    release();
    expect((await first).statusCode).toBe(200);
  });

  it('an error response releases the key: a corrected retry runs', async () => {
    const { key, tenantId, keyId } = await credential();
    let fail = true;
    const h = http.defineHandler({
      async handler() {
        if (fail) throw http.badRequest('not yet');
        return http.ok({ ran: true });
      },
    });
    expect((await h(event('POST', '/api/v1/secrets', key, { idem: 'e' }), ctx)).statusCode).toBe(400);
    expect(await t.get(idemItem(tenantId, keyId, 'e'))).toBeUndefined();
    fail = false;
    const retry = await h(event('POST', '/api/v1/secrets', key, { idem: 'e' }), ctx);
    expect(json(retry)).toEqual({ success: true, data: { ran: true } });
    // a 4xx reply returned (not thrown) releases it too
    for (const status of [400, 422]) {
      const soft = http.defineHandler({ handler: async () => ({ status, data: null }) });
      await soft(event('POST', '/api/v1/secrets', key, { idem: `soft-${status}` }), ctx);
      expect(await t.get(idemItem(tenantId, keyId, `soft-${status}`))).toBeUndefined();
    }
    // a 399 is kept
    const kept = http.defineHandler({ handler: async () => ({ status: 399, data: null }) });
    await kept(event('POST', '/api/v1/secrets', key, { idem: 'kept' }), ctx);
    expect(await t.get(idemItem(tenantId, keyId, 'kept'))).toMatchObject({ state: 'done' });
  });

  it('a table error while taking the key is not a reuse: the request fails (500) without running', async () => {
    const { key, tenantId } = await credential();
    const { intercept } = await import('./dynamo-faults.js');
    // the key is taken inside the tenant's scope, on the tenant's client (lib/store/client.ts)
    const undo = intercept(withTenant(tenantId, () => db()), (command, input) => {
      if (command === 'PutItemCommand' && input.Item?.pk === `T#${tenantId}` && String(input.Item?.sk).startsWith('IDEM#')) throw new Error('table unavailable');
      return undefined;
    });
    try {
      let ran = 0;
      const res = await http.defineHandler({ handler: async () => http.ok({ ran: ++ran }) })(event('POST', '/api/v1/secrets', key, { idem: 'down' }), ctx);
      expect(res.statusCode).toBe(500);
      expect(ran).toBe(0);
    } finally {
      undo();
    }
  });

  it('an expired record no longer binds the key', async () => {
    const { key, tenantId, keyId } = await credential();
    await t.put({ ...idemItem(tenantId, keyId, 'old'), state: 'done', fingerprint: 'other', ttl: Math.floor(Date.now() / 1000) - 5 });
    let ran = 0;
    const h = http.defineHandler({ handler: async () => http.ok({ ran: ++ran }) });
    expect((await h(event('POST', '/api/v1/secrets', key, { idem: 'old' }), ctx)).statusCode).toBe(200);
    expect(ran).toBe(1);
  });

  it('key syntax: 1-255 printable ASCII characters', async () => {
    const { key } = await credential();
    const h = http.defineHandler({ handler: async () => http.ok({}) });
    for (const bad of ['', 'x'.repeat(256), 'with space', 'tab\tkey', 'é']) {
      const res = await h(event('POST', '/api/v1/secrets', key, { idem: bad }), ctx);
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
      expect(json(res)).toMatchObject({ code: 'invalid_idempotency_key', error: 'Idempotency-Key must be 1-255 printable characters' });
    }
    for (const good of ['x'.repeat(255), '!~', 'a']) expect((await h(event('POST', '/api/v1/secrets', key, { idem: good }), ctx)).statusCode).toBe(200);
  });

  it('every mutation method is covered: PATCH too (an operator route)', async () => {
    const tenantId = await t.account({ operator: true });
    const { key } = apiKeys.generateApiKey();
    await t.put({ pk: `KEY#${apiKeys.hashApiKey(key)}`, sk: 'KEY', tenant_id: tenantId, key_id: randomUUID(), scopes: ['admin:*'], created_by: null, expires_at: null });
    let n = 0;
    const h = http.defineHandler({ handler: async () => http.ok({ n: ++n }) });
    const patch = () => event('PATCH', '/api/v1/admin/tenants/{id}/suspend', key, { idem: 'p-1', pathParameters: { id: tenantId }, body: null });
    await h(patch(), ctx);
    const again = await h(patch(), ctx);
    expect(again.headers!['Idempotent-Replayed']).toBe('true');
    expect(n).toBe(1);
  });

  it('ignored on reads, on routes without a principal, and without the header', async () => {
    const { key } = await credential();
    let n = 0;
    const h = http.defineHandler({ handler: async () => http.ok({ n: ++n }) });
    await h(event('GET', '/api/v1/secrets', key, { idem: 'r' }), ctx);
    await h(event('GET', '/api/v1/secrets', key, { idem: 'r' }), ctx);
    expect(n).toBe(2);
    await h(event('POST', '/api/v1/secrets', key), ctx);
    await h(event('POST', '/api/v1/secrets', key), ctx);
    expect(n).toBe(4);
    const pub = await h(event('POST', '/api/v1/agent/oauth/device', key, { idem: 'p' }), ctx);
    const pub2 = await h(event('POST', '/api/v1/agent/oauth/device', key, { idem: 'p' }), ctx);
    expect([pub.headers!['Idempotent-Replayed'], pub2.headers!['Idempotent-Replayed']]).toEqual([undefined, undefined]);
    expect(n).toBe(6);
  });

  it('keys are per credential: another key of the same account with the same Idempotency-Key runs', async () => {
    const a = await credential();
    const { key } = apiKeys.generateApiKey();
    await t.put({ pk: `KEY#${apiKeys.hashApiKey(key)}`, sk: 'KEY', tenant_id: a.tenantId, key_id: randomUUID(), scopes: ['admin:*'], created_by: null, expires_at: null });
    let n = 0;
    const h = http.defineHandler({ handler: async () => http.ok({ n: ++n }) });
    await h(event('POST', '/api/v1/secrets', a.key, { idem: 'shared' }), ctx);
    const other = await h(event('POST', '/api/v1/secrets', key, { idem: 'shared' }), ctx);
    expect(json(other).data).toEqual({ n: 2 });
  });
});

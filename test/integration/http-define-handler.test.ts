import { randomUUID } from 'node:crypto';
import * as z from 'zod/v4';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { table } from './table.js';
import * as http from '../../lib/http/index.js';
import { logger } from '../../lib/core/logger.js';
import { metrics } from '../../lib/core/metrics.js';
import { generateApiKey, hashApiKey } from '../../lib/auth/api-keys.js';

/**
 * lib/http/define-handler.ts: the one middy stack, called as Lambda calls a handler (an API
 * Gateway proxy event and a context), against the suite's table for authentication, rate
 * limits and audit: the order of the checks, each failure's envelope, what the handler is
 * given, and the request log line.
 */
let t: Awaited<ReturnType<typeof table>>;

beforeAll(async () => {
  t = await table();
});
afterEach(() => {
  vi.restoreAllMocks();
});

async function credential(scopes: string[], account: { settings?: Record<string, unknown>; quota?: Record<string, number> } = {}) {
  const tenantId = await t.account(account);
  const { key } = generateApiKey();
  const keyId = randomUUID();
  await t.put({ pk: `KEY#${hashApiKey(key)}`, sk: 'KEY', tenant_id: tenantId, key_id: keyId, scopes, created_by: 'dh@unit.example', expires_at: null });
  return { tenantId, keyId, key };
}

function event(method: string, resource: string, fields: Partial<APIGatewayProxyEvent> = {}): APIGatewayProxyEvent {
  return {
    httpMethod: method,
    resource,
    path: resource,
    headers: {},
    multiValueHeaders: {},
    pathParameters: null,
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    stageVariables: null,
    body: null,
    isBase64Encoded: false,
    requestContext: { requestId: `req-${randomUUID()}`, identity: { sourceIp: '192.0.2.10', userAgent: 'unit-agent' } } as never,
    ...fields,
  };
}
const context = { awsRequestId: 'aws-req-1', getRemainingTimeInMillis: () => 28_000 } as never;
const json = (r: { body: string }) => JSON.parse(r.body);

const Body = z.strictObject({ name: z.string().min(1), data: z.record(z.string(), z.string()) });
const Params = z.strictObject({ name: z.string().regex(/^[a-z]+$/) });
const Query = z.strictObject({ limit: z.coerce.number().int().max(10).optional() });

describe('defineHandler', () => {
  it('success: the handler gets the principal, validated input and lower-cased headers; the envelope carries the request id, security and RateLimit headers', async () => {
    const { key, tenantId, keyId } = await credential(['secrets:write']);
    const seen = vi.fn();
    const h = http.defineHandler({
      body: Body,
      query: Query,
      async handler(input) {
        seen({ ...input, ctx: input.ctx });
        return http.created({ ok: true }, { ETag: '"e"' });
      },
    });
    const ev = event('POST', '/api/v1/secrets', {
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json; charset=utf-8', 'X-Custom': 'V' },
      queryStringParameters: { limit: '3' },
      body: JSON.stringify({ name: 'n', data: { a: 'b' } }),
    });
    const res = await h(ev, context);
    expect(res.statusCode).toBe(201);
    expect(json(res)).toEqual({ success: true, data: { ok: true } });
    expect(res.headers).toMatchObject({
      'X-Request-Id': ev.requestContext.requestId,
      ETag: '"e"',
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
      'RateLimit-Policy': '"account";q=6000;w=60',
      RateLimit: '"account";r=5999;t=1',
    });
    const input = seen.mock.calls[0]![0];
    expect(input.route.key).toBe('POST /api/v1/secrets');
    expect(input.requestId).toBe(ev.requestContext.requestId);
    expect(input.principal).toMatchObject({ kind: 'api_key', tenantId, id: keyId });
    expect(input.ctx).toEqual({ principal: input.principal, requestId: ev.requestContext.requestId, sourceIp: '192.0.2.10', userAgent: 'unit-agent' });
    expect(input.body).toEqual({ name: 'n', data: { a: 'b' } });
    expect(input.query).toEqual({ limit: 3 });
    expect(input.params).toBeUndefined();
    expect(input.headers).toMatchObject({ authorization: `Bearer ${key}`, 'x-custom': 'V', 'content-type': 'application/json; charset=utf-8' });
    expect(input.sourceIp).toBe('192.0.2.10');
    expect(h.schemas).toEqual({ params: undefined, query: Query, body: Body });
  });

  it('one log line per request: route, status, duration, account and principal, never the body nor the caller address', async () => {
    const { key, tenantId, keyId } = await credential(['secrets:write']);
    const info = vi.spyOn(logger, 'info');
    const h = http.defineHandler({ body: Body, handler: async () => http.ok({}) });
    const ev = event('POST', '/api/v1/secrets', { headers: { authorization: `Bearer ${key}` }, body: JSON.stringify({ name: 'CANARY-log', data: {} }) });
    await h(ev, context);
    const lines = info.mock.calls.filter(([m]) => m === 'request');
    expect(lines).toHaveLength(1);
    expect(lines[0]![1]).toMatchObject({
      request_id: ev.requestContext.requestId,
      route: 'POST /api/v1/secrets',
      status: 200,
      tenant_id: tenantId,
      principal: `api_key:${keyId}`,
    });
    expect(typeof (lines[0]![1] as { latency: number }).latency).toBe('number');
    // the address (and user agent) are the stage access log's, under the same request id
    expect(lines[0]![1]).not.toHaveProperty('source_ip');
    expect(JSON.stringify(lines[0])).not.toContain('192.0.2.10');
    expect(JSON.stringify(lines[0])).not.toContain('CANARY-log');
    // an unauthenticated request logs no principal
    info.mockClear();
    const denied = await h(event('POST', '/api/v1/secrets'), context);
    expect(denied.statusCode).toBe(401);
    expect(info.mock.calls.find(([m]) => m === 'request')![1]).toMatchObject({ status: 401, tenant_id: undefined, principal: undefined });
  });

  it('an unknown route is an opaque 500 that logs its cause; the request id falls back to the Lambda one', async () => {
    const error = vi.spyOn(logger, 'error');
    const h = http.defineHandler({ handler: async () => http.ok({}) });
    const res = await h(event('GET', '/api/v1/nowhere', { requestContext: undefined as never }), context);
    expect(res.statusCode).toBe(500);
    expect(json(res)).toEqual({ success: false, error: 'internal error', code: 'internal_error', request_id: 'aws-req-1' });
    expect(res.headers!['X-Request-Id']).toBe('aws-req-1');
    expect(error).toHaveBeenCalledWith('request failed', expect.objectContaining({ request_id: 'aws-req-1', code: 'internal_error' }));
    expect(String((error.mock.calls[0]![1] as { error: Error }).error.message)).toBe('no route for GET /api/v1/nowhere');
  });

  it('the log line of a request that found no route names its method and resource; durations are elapsed milliseconds', async () => {
    const info = vi.spyOn(logger, 'info');
    const h = http.defineHandler({ handler: async () => http.ok({}) });
    const before = Date.now();
    await h(event('DELETE', '/api/v1/nowhere/{x}'), context);
    const line = info.mock.calls.find(([m]) => m === 'request')![1] as { route: string; status: number; latency: number };
    expect(line).toMatchObject({ route: 'DELETE /api/v1/nowhere/{x}', status: 500 });
    expect(line.latency).toBeGreaterThanOrEqual(0);
    expect(line.latency).toBeLessThanOrEqual(Date.now() - before);
  });

  it('an event without caller identity (no source address or user agent) still authenticates and audits; ctx says null', async () => {
    const { key } = await credential(['secrets:read']);
    const info = vi.spyOn(logger, 'info');
    const seen = vi.fn();
    const h = http.defineHandler({
      async handler({ ctx, sourceIp }) {
        seen({ ctx, sourceIp });
        return http.ok({});
      },
    });
    for (const requestContext of [{ requestId: 'no-identity' }, undefined]) {
      const res = await h(event('GET', '/api/v1/secrets', { headers: { authorization: `Bearer ${key}` }, requestContext: requestContext as never }), context);
      expect(res.statusCode).toBe(200);
    }
    for (const [call] of seen.mock.calls) {
      expect(call.sourceIp).toBeNull();
      expect(call.ctx).toMatchObject({ sourceIp: null, userAgent: null });
    }
    const lines = info.mock.calls.filter(([m]) => m === 'request').map(([, l]) => l as { request_id: string });
    expect(lines.map((l) => l.request_id)).toEqual(['no-identity', 'aws-req-1']);
  });

  it('a 4xx with a cause is not a dependency failure', async () => {
    const warn = vi.spyOn(logger, 'warn');
    const { key } = await credential(['secrets:read']);
    const res = await http.defineHandler({ handler: async () => Promise.reject(new http.HttpError(409, 'c', 'm', { cause: new Error('inner') })) })(
      event('GET', '/api/v1/secrets', { headers: { authorization: `Bearer ${key}` } }),
      context,
    );
    expect(res.statusCode).toBe(409);
    expect(warn.mock.calls.filter(([m]) => m === 'dependency failed')).toEqual([]);
  });

  it('every missing scope is named; a missing body is validated as absent; undefined header values are dropped', async () => {
    const { key } = await credential(['secrets:read']);
    const denied = await http.defineHandler({ handler: async () => http.ok({}) })(event('POST', '/api/v1/containers', { headers: { authorization: `Bearer ${key}` }, body: '{}' }), context);
    expect(json(denied)).toMatchObject({ code: 'insufficient_scope', error: 'missing scope: containers:read, containers:write' });
    const { key: writer } = await credential(['secrets:write']);
    const absent = await http.defineHandler({ body: Body, handler: async () => http.ok({}) })(event('POST', '/api/v1/secrets', { headers: { authorization: `Bearer ${writer}` }, body: null }), context);
    expect(absent.statusCode).toBe(400);
    expect(json(absent)).toMatchObject({ code: 'validation_failed', details: [{ path: 'body' }] });
    const seen = vi.fn();
    await http.defineHandler({ handler: async ({ headers }) => (seen(headers), http.ok({})) })(
      event('GET', '/api/v1/secrets', { headers: { authorization: `Bearer ${key}`, 'X-Absent': undefined } as never }),
      context,
    );
    expect(Object.keys(seen.mock.calls[0]![0])).not.toContain('x-absent');
  });

  it('a content type that only mentions JSON after another type is not JSON', async () => {
    const { key } = await credential(['secrets:write']);
    const h = http.defineHandler({ body: Body, handler: async () => http.ok({}) });
    for (const type of ['text/plain; application/json', 'multipart/mixed, application/json']) {
      const res = await h(event('POST', '/api/v1/secrets', { headers: { authorization: `Bearer ${key}`, 'content-type': type }, body: '{"name":"n","data":{}}' }), context);
      expect(res.statusCode, type).toBe(415);
    }
  });

  it('a handler without a body schema ignores the body (not parsed, not checked)', async () => {
    const { key } = await credential(['secrets:read']);
    const res = await http.defineHandler({ handler: async ({ body }) => http.ok({ body: body ?? null }) })(
      event('GET', '/api/v1/secrets', { headers: { authorization: `Bearer ${key}`, 'content-type': 'text/plain' }, body: '{not json' }),
      context,
    );
    expect(res.statusCode).toBe(200);
    expect(json(res)).toEqual({ success: true, data: { body: null } });
  });

  it('the body limit comes first: 413 before authentication (plain and base64 bodies)', async () => {
    const h = http.defineHandler({ body: Body, handler: async () => http.ok({}) });
    const limit = 1024 * 1024;
    const big = await h(event('POST', '/api/v1/secrets', { body: 'x'.repeat(limit + 1) }), context);
    expect(big.statusCode).toBe(413);
    expect(json(big)).toMatchObject({ code: 'payload_too_large', error: `request body exceeds the ${limit} byte limit of this route` });
    // exactly the limit passes the size check (and fails authentication next)
    expect((await h(event('POST', '/api/v1/secrets', { body: 'x'.repeat(limit) }), context)).statusCode).toBe(401);
    // multi-byte characters count as bytes
    expect((await h(event('POST', '/api/v1/secrets', { body: 'é'.repeat(limit / 2 + 1) }), context)).statusCode).toBe(413);
    // base64: the decoded size counts (4 characters = 3 bytes)
    const encoded = 'A'.repeat(Math.ceil(((limit + 3) * 4) / 3));
    expect((await h(event('POST', '/api/v1/secrets', { body: encoded, isBase64Encoded: true }), context)).statusCode).toBe(413);
    expect((await h(event('POST', '/api/v1/secrets', { body: 'A'.repeat((limit / 3) * 4), isBase64Encoded: true }), context)).statusCode).toBe(401);
  });

  it('401 carries WWW-Authenticate; 403 for a missing scope names it and is audited', async () => {
    const { key, tenantId } = await credential(['secrets:read']);
    const h = http.defineHandler({ body: Body, handler: async () => http.ok({}) });
    const unauth = await h(event('POST', '/api/v1/secrets', { headers: { authorization: 'Bearer nope-nope-nope' } }), context);
    expect(unauth.statusCode).toBe(401);
    expect(unauth.headers).toMatchObject({ 'WWW-Authenticate': 'Bearer' });
    const ev = event('POST', '/api/v1/secrets', { headers: { authorization: `Bearer ${key}` }, body: '{}' });
    const res = await h(ev, context);
    expect(res.statusCode).toBe(403);
    expect(json(res)).toEqual({ success: false, error: 'missing scope: secrets:write', code: 'insufficient_scope', request_id: ev.requestContext.requestId });
    // the limit is enforced after the scope check: a scope refusal has no binding decision to report
    expect(res.headers!.RateLimit).toBeUndefined();
    const { QueryCommand } = await import('@aws-sdk/lib-dynamodb');
    const audit = await t.db().send(
      new QueryCommand({ TableName: t.tableName(), KeyConditionExpression: 'pk = :p AND begins_with(sk, :s)', ExpressionAttributeValues: { ':p': `T#${tenantId}`, ':s': 'AUDIT#' }, ConsistentRead: true }),
    );
    expect(audit.Items).toHaveLength(1);
    expect(audit.Items![0]).toMatchObject({ action: 'access.denied', detail: { code: 'insufficient_scope' }, request_id: ev.requestContext.requestId });
  });

  it('a refused rate limit: 429 with Retry-After, before validation and the handler', async () => {
    const { key } = await credential(['secrets:write'], { quota: { requests_per_minute: 1 } });
    const handler = vi.fn(async () => http.ok({}));
    const h = http.defineHandler({ body: Body, handler });
    const ev = () => event('POST', '/api/v1/secrets', { headers: { authorization: `Bearer ${key}` }, body: '{"bad":1}' });
    const invalid = await h(ev(), context);
    expect(invalid.statusCode).toBe(400);
    // errors after admission carry the RateLimit headers of the binding decision
    expect(invalid.headers).toMatchObject({ 'RateLimit-Policy': '"account";q=1;w=60', RateLimit: '"account";r=0;t=60' });
    const res = await h(ev(), context);
    expect(res.statusCode).toBe(429);
    // one token a minute: back in 60 s, or 59 if the clock crossed a second in between
    const wait = Number(res.headers!['Retry-After']);
    expect([59, 60]).toContain(wait);
    expect(res.headers).toMatchObject({ RateLimit: `"account";r=0;t=${wait}` });
    expect(handler).not.toHaveBeenCalled();
  });

  it('metrics per request: requests, errors and latency by route family, limiter decisions, carried on the one request line (EMF); never an account in a dimension', async () => {
    // metrics on, as in Lambda; the printed lines captured (the logger writes to stdout)
    vi.spyOn(metrics, 'off', 'get').mockReturnValue(false);
    const separate = vi.spyOn(metrics, 'publishStoredMetrics');
    const printed: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    vi.spyOn(process.stdout, 'write').mockImplementation(((chunk: string | Uint8Array, ...rest: unknown[]) => {
      printed.push(String(chunk));
      return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof process.stdout.write);
    const { key, tenantId, keyId } = await credential(['secrets:write'], { quota: { requests_per_minute: 1 } });
    const h = http.defineHandler({ body: Body, handler: async () => http.ok({}) });
    const ev = () => event('POST', '/api/v1/secrets', { headers: { authorization: `Bearer ${key}` }, body: JSON.stringify({ name: 'n', data: {} }) });
    expect((await h(ev(), context)).statusCode).toBe(200);
    expect((await h(ev(), context)).statusCode).toBe(429);
    const boom = http.defineHandler({ handler: async () => Promise.reject(new Error('down')) });
    const missing = await credential(['secrets:read']);
    expect((await boom(event('GET', '/api/v1/secrets', { headers: { authorization: `Bearer ${missing.key}` } }), context)).statusCode).toBe(500);

    const lines = printed.join('').split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, any>);
    // one line a request: no separate EMF line, each request line carries the document
    expect(separate).not.toHaveBeenCalled();
    expect(lines.filter((l) => l._aws && l.message !== 'request')).toEqual([]);
    const requests = lines.filter((l) => l.message === 'request');
    expect(requests).toHaveLength(3);
    // a valid EMF document on each (CloudWatch's specification): a millisecond Timestamp, one
    // directive whose every dimension and metric name is a top-level key, metric values numbers
    const [ok, limited, failed] = requests.map((line) => {
      expect(Number.isInteger(line._aws.Timestamp)).toBe(true);
      expect(line._aws.CloudWatchMetrics).toHaveLength(1);
      const directive = line._aws.CloudWatchMetrics[0];
      expect(directive.Namespace).toBe('secrets-api');
      for (const set of directive.Dimensions) for (const d of set) expect(typeof line[d], d).toBe('string');
      for (const m of directive.Metrics) {
        expect(typeof line[m.Name], m.Name).toBe('number');
        expect(['Count', 'Milliseconds']).toContain(m.Unit);
      }
      return { dimensions: [...directive.Dimensions[0]].sort(), names: directive.Metrics.map((m: { Name: string }) => m.Name).sort(), doc: line };
    });
    expect(ok!.dimensions).toEqual(['family', 'service']);
    expect(ok!.doc).toMatchObject({ family: 'secrets', service: 'secrets-api', requests: 1, limiter_allowed: 1, status: 200, route: 'POST /api/v1/secrets' });
    // the whole printed line (CloudWatch prices every byte): the trace fields and the metrics, no
    // logger timestamp (the EMF Timestamp is the same instant, and CloudWatch keeps each event's
    // own), no constant sampling_rate, no caller address
    expect(Object.keys(ok!.doc).sort()).toEqual(
      ['_aws', 'family', 'latency', 'level', 'limiter_allowed', 'message', 'principal', 'request_id', 'requests', 'route', 'service', 'status', 'tenant_id'].sort(),
    );
    expect(ok!.doc).toMatchObject({ level: 'INFO', tenant_id: tenantId, principal: `api_key:${keyId}` });
    // the duration once: the line's `latency` is the EMF metric's value
    expect(printed.join('').split('\n').filter((l) => l.includes('"message":"request"')).every((l) => l.split('"latency":').length === 2)).toBe(true);
    expect(Math.abs(ok!.doc._aws.Timestamp - Date.now())).toBeLessThan(60_000);
    // a line without a metric document keeps its timestamp
    printed.length = 0;
    logger.info('other');
    const other = JSON.parse(printed.join('').trim()) as Record<string, string>;
    expect(Math.abs(Date.parse(other.timestamp!) - Date.now())).toBeLessThan(60_000);
    expect(other).not.toHaveProperty('sampling_rate');
    expect(ok!.names).toEqual(['latency', 'limiter_allowed', 'requests']);
    expect(typeof ok!.doc.latency).toBe('number');
    expect(limited!.doc).toMatchObject({ family: 'secrets', requests: 1, limiter_denied: 1, client_errors: 1, status: 429 });
    expect(failed!.doc).toMatchObject({ family: 'secrets', requests: 1, errors: 1, status: 500 });
    // no account, credential or request in any metric document (the directive and the metric values)
    for (const line of requests) {
      const emf = { _aws: line._aws, ...Object.fromEntries(line._aws.CloudWatchMetrics[0].Metrics.map((m: { Name: string }) => [m.Name, line[m.Name]])) };
      for (const id of [tenantId, keyId, missing.tenantId, missing.keyId]) expect(JSON.stringify(emf)).not.toContain(id);
    }
  });

  it('a log level above INFO (no request line printed): the metrics go out on their own EMF line', async () => {
    vi.spyOn(metrics, 'off', 'get').mockReturnValue(false);
    vi.spyOn(logger, 'level', 'get').mockReturnValue(16);
    const published: Record<string, any>[] = [];
    vi.spyOn(metrics, 'publishStoredMetrics').mockImplementation(() => {
      published.push(metrics.serializeMetrics() as Record<string, any>);
      metrics.clearMetrics();
      metrics.clearDimensions();
      return metrics;
    });
    const info = vi.spyOn(logger, 'info');
    const { key } = await credential(['secrets:read']);
    const h = http.defineHandler({ handler: async () => http.ok({}) });
    expect((await h(event('GET', '/api/v1/secrets', { headers: { authorization: `Bearer ${key}` } }), context)).statusCode).toBe(200);
    expect(published).toHaveLength(1);
    expect(published[0]).toMatchObject({ family: 'secrets', service: 'secrets-api', requests: 1 });
    expect(info.mock.calls.find(([m]) => m === 'request')![1]).not.toHaveProperty('_aws');
  });

  it('JSON bodies: the content type must be JSON (any +json suffix, any case), the text valid and not too deep', async () => {
    const { key } = await credential(['secrets:write']);
    const h = http.defineHandler({ body: Body, handler: async ({ body }) => http.ok(body) });
    const call = (body: string, type?: string, base64 = false) =>
      h(event('POST', '/api/v1/secrets', { headers: { authorization: `Bearer ${key}`, ...(type ? { 'content-type': type } : {}) }, body, isBase64Encoded: base64 }), context);
    const good = JSON.stringify({ name: 'n', data: {} });
    for (const type of ['application/json', 'APPLICATION/JSON', 'application/merge-patch+json', 'application/vnd.api+json; charset=utf-8', undefined]) {
      expect((await call(good, type)).statusCode, String(type)).toBe(200);
    }
    for (const type of ['text/plain', 'application/jsonx', 'application/x-www-form-urlencoded', 'text/json']) {
      const res = await call(good, type);
      expect(res.statusCode, type).toBe(415);
      expect(json(res).code).toBe('unsupported_media_type');
    }
    expect(json(await call(Buffer.from(good).toString('base64'), 'application/json', true))).toEqual({ success: true, data: { name: 'n', data: {} } });
    expect(json(await call('{"name":', 'application/json')).code).toBe('invalid_json');
    expect(json(await call(`${'['.repeat(17)}${']'.repeat(17)}`, 'application/json')).code).toBe('json_too_deep');
    // an empty body is validated as absent
    expect(json(await call('', 'text/plain'))).toMatchObject({ code: 'validation_failed', details: [{ path: 'body' }] });
  });

  it('validation collects every field error of params, query and body in one 400', async () => {
    const { key } = await credential(['secrets:read']);
    const h = http.defineHandler({ params: Params, query: Query, body: Body, handler: async () => http.ok({}) });
    const res = await h(
      event('GET', '/api/v1/secrets/{name}', {
        headers: { authorization: `Bearer ${key}` },
        pathParameters: { name: 'UPPER' },
        queryStringParameters: { limit: '99' },
        body: JSON.stringify({ name: '', data: { a: 1 }, extra: true }),
      }),
      context,
    );
    expect(res.statusCode).toBe(400);
    const body = json(res);
    expect(body).toMatchObject({ code: 'validation_failed', error: 'request validation failed' });
    const paths = body.details.map((d: { path: string }) => d.path).sort();
    expect(paths).toEqual(['body', 'body.data.a', 'body.name', 'params.name', 'query.limit']);
    // absent path parameters and query are validated as empty objects
    const absent = await h(event('GET', '/api/v1/secrets/{name}', { headers: { authorization: `Bearer ${key}` }, body: JSON.stringify({ name: 'a', data: {} }) }), context);
    expect(json(absent).details.map((d: { path: string }) => d.path)).toEqual(['params.name']);
  });

  it('routes that authenticate themselves: no principal; asking for ctx is an internal error; no rate limit for public routes', async () => {
    const h = http.defineHandler({ handler: async ({ principal }) => http.ok({ principal }) });
    const res = await h(event('GET', '/health'), context);
    expect(res.statusCode).toBe(200);
    expect(json(res)).toEqual({ success: true, data: { principal: null } });
    expect(res.headers!.RateLimit).toBeUndefined();
    const error = vi.spyOn(logger, 'error');
    const withCtx = http.defineHandler({ handler: async ({ ctx }) => http.ok({ ctx }) });
    const bad = await withCtx(event('GET', '/health'), context);
    expect(bad.statusCode).toBe(500);
    expect(json(bad).code).toBe('internal_error');
    expect((error.mock.calls.at(-1)![1] as { error: Error }).error.message).toBe('route has no authenticated principal');
  });

  it('errors from the handler: typed ones as they are, anything else an opaque 500; a 5xx with a cause is logged as a dependency failure', async () => {
    const warn = vi.spyOn(logger, 'warn');
    const { key } = await credential(['secrets:read']);
    const ev = () => event('GET', '/api/v1/secrets', { headers: { authorization: `Bearer ${key}` } });
    const typed = await http.defineHandler({ handler: async () => Promise.reject(http.conflict('taken', 'already_exists')) })(ev(), context);
    expect(typed.statusCode).toBe(409);
    expect(json(typed)).toMatchObject({ error: 'taken', code: 'already_exists' });
    const opaque = await http.defineHandler({ handler: async () => Promise.reject(new Error('password=hunter2')) })(ev(), context);
    expect(opaque.statusCode).toBe(500);
    expect(opaque.body).not.toContain('hunter2');
    const upstream = await http.defineHandler({ handler: async () => Promise.reject(http.serviceUnavailable('HSM down', new Error('socket'))) })(ev(), context);
    expect(upstream.statusCode).toBe(503);
    expect(json(upstream).error).toBe('HSM down');
    expect(warn).toHaveBeenCalledWith('dependency failed', expect.objectContaining({ code: 'service_unavailable' }));
    warn.mockClear();
    await http.defineHandler({ handler: async () => Promise.reject(http.serviceUnavailable('no cause')) })(ev(), context);
    expect(warn.mock.calls.filter(([m]) => m === 'dependency failed')).toEqual([]);
  });

  it('a raw download reply keeps its body and content type', async () => {
    const { key } = await credential(['secrets:read']);
    const res = await http.defineHandler({ handler: async () => http.download('a,b\n', 'text/csv') })(event('GET', '/api/v1/secrets', { headers: { authorization: `Bearer ${key}` } }), context);
    expect(res).toMatchObject({ statusCode: 200, body: 'a,b\n', headers: { 'Content-Type': 'text/csv' } });
  });
});

import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey } from '../../lib/auth/api-keys.js';
import {
  addCorsHeaders,
  ALLOW_HEADERS,
  answerPreflight,
  EXPOSE_HEADERS,
  methodsByPath,
  preflightHandler,
  withCors,
} from '../../lib/http/cors.js';
import { parseOrigins } from '../../lib/core/origins.js';
import { ROUTES } from '../../lib/routes.js';
import { table } from './table.js';

/**
 * lib/http/cors.ts: the origin list, the headers of actual responses and of preflights, and
 * defineHandler's responses (success, error, idempotent replay) with CORS_ALLOWED_ORIGINS
 * set, called as Lambda calls them.
 */
const ORIGINS = ['https://app.example.com', 'http://localhost:5173'];
const context = { awsRequestId: 'aws-req-cors', getRemainingTimeInMillis: () => 28_000 } as never;

function event(method: string, resource: string, headers: Record<string, string> = {}, fields: Partial<APIGatewayProxyEvent> = {}): APIGatewayProxyEvent {
  return {
    httpMethod: method,
    resource,
    path: resource,
    headers,
    multiValueHeaders: {},
    pathParameters: null,
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    stageVariables: null,
    body: null,
    isBase64Encoded: false,
    requestContext: { requestId: `req-${randomUUID()}`, identity: { sourceIp: '192.0.2.44', userAgent: 'cors-unit' } } as never,
    ...fields,
  };
}

const corsNames = (r: APIGatewayProxyResult) => Object.keys(r.headers ?? {}).filter((h) => /^access-control-|^vary$/i.test(h));

describe('parseOrigins', () => {
  it('reads a comma-separated list of exact origins, trimming blanks and duplicates', () => {
    expect(parseOrigins(' https://app.example.com, http://localhost:5173,,https://app.example.com ')).toEqual(ORIGINS);
    expect(parseOrigins(['https://a.example.com:8443'])).toEqual(['https://a.example.com:8443']);
    expect(parseOrigins(undefined)).toEqual([]);
    expect(parseOrigins('')).toEqual([]);
  });

  it('refuses anything a browser would never send as Origin, naming it', () => {
    for (const bad of ['*', 'null', 'https://app.example.com/', 'https://app.example.com/path', 'HTTPS://APP.example.com', 'app.example.com', 'ftp://x.example.com', 'https://x.example.com:443']) {
      expect(() => parseOrigins(`https://ok.example.com,${bad}`), bad).toThrow(`not an origin: ${JSON.stringify(bad)}`);
    }
  });
});

describe('actual responses', () => {
  const result: APIGatewayProxyResult = { statusCode: 200, headers: { 'Content-Type': 'application/json', vary: 'Accept-Encoding' }, body: '{}' };

  it('carry the allowed origin, Vary: Origin (merged) and the exposed headers', () => {
    const out = addCorsHeaders(result, ORIGINS, { origin: 'http://localhost:5173' });
    expect(out.headers).toEqual({
      'Content-Type': 'application/json',
      'Access-Control-Allow-Origin': 'http://localhost:5173',
      'Access-Control-Expose-Headers': 'ETag, X-Request-Id, Retry-After, Idempotent-Replayed',
      Vary: 'Accept-Encoding, Origin',
    });
    expect(EXPOSE_HEADERS).toEqual(['ETag', 'X-Request-Id', 'Retry-After', 'Idempotent-Replayed']);
  });

  it('carry nothing at all for another origin, a near miss, or no Origin header', () => {
    for (const origin of ['https://evil.example.com', 'https://app.example.com.evil.example', 'https://APP.example.com', 'https://app.example.com/', undefined]) {
      const out = addCorsHeaders(result, ORIGINS, origin === undefined ? {} : { Origin: origin });
      expect(out, String(origin)).toBe(result);
    }
  });

  it('withCors adds them around any handler and leaves responses alone when CORS is off', async () => {
    const inner = async () => ({ statusCode: 418, headers: { 'X-Request-Id': 'r' }, body: '' });
    const on = await withCors(inner, () => ORIGINS)(event('GET', '/health', { Origin: ORIGINS[0]! }), context);
    expect(on.headers!['Access-Control-Allow-Origin']).toBe(ORIGINS[0]);
    const off = await withCors(inner, () => [])(event('GET', '/health', { Origin: ORIGINS[0]! }), context);
    expect(corsNames(off)).toEqual([]);
    const broken = await withCors(inner, () => {
      throw new Error('invalid configuration');
    })(event('GET', '/health', { Origin: ORIGINS[0]! }), context);
    expect(corsNames(broken)).toEqual([]);
  });
});

describe('preflights', () => {
  const paths = methodsByPath();

  it('know every path of the route table with exactly its methods', () => {
    expect(paths.size).toBe(new Set(ROUTES.map((r) => r.path)).size);
    expect(paths.get('/api/v1/secrets/{name}')).toEqual(['DELETE', 'GET', 'PUT']);
    for (const r of ROUTES) expect(paths.get(r.path), r.key).toContain(r.method);
  });

  it('answer 204 with the path\'s methods and the allowed request headers for an allowed origin and method', () => {
    const a = answerPreflight(ORIGINS, '/api/v1/secrets/{name}', { origin: ORIGINS[0], 'access-control-request-method': 'PUT' }, paths);
    expect(a).toEqual({
      status: 204,
      headers: {
        'Access-Control-Allow-Origin': ORIGINS[0],
        'Access-Control-Allow-Methods': 'DELETE, GET, PUT, OPTIONS',
        'Access-Control-Allow-Headers': 'Authorization, Content-Type, If-Match, Idempotency-Key',
        'Access-Control-Max-Age': '600',
        Vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
      },
    });
    expect(ALLOW_HEADERS).toEqual(['Authorization', 'Content-Type', 'If-Match', 'Idempotency-Key']);
  });

  it('refuse without any CORS header: another origin (403), a method the path lacks (403), an unknown path (404)', () => {
    const cases: [string, Record<string, string>, number][] = [
      ['/api/v1/secrets/{name}', { Origin: 'https://evil.example.com', 'Access-Control-Request-Method': 'GET' }, 403],
      ['/api/v1/secrets/{name}', { Origin: ORIGINS[0]!, 'Access-Control-Request-Method': 'POST' }, 403],
      ['/api/v1/secrets/{name}', { Origin: ORIGINS[0]! }, 403],
      ['/api/v1/nothing-here', { Origin: ORIGINS[0]!, 'Access-Control-Request-Method': 'GET' }, 404],
    ];
    for (const [path, headers, status] of cases) {
      const a = answerPreflight(ORIGINS, path, headers, paths);
      expect(a.status, JSON.stringify(headers)).toBe(status);
      expect(a.headers).toEqual({});
    }
  });

  it('the preflight function answers with the event\'s path template; refusals in the error envelope', async () => {
    const fn = preflightHandler(() => ORIGINS);
    const ok = await fn(event('OPTIONS', '/api/v1/secrets', { origin: ORIGINS[1]!, 'access-control-request-method': 'POST' }), context);
    expect(ok.statusCode).toBe(204);
    expect(ok.body).toBe('');
    expect(ok.headers!['Access-Control-Allow-Methods']).toBe('GET, POST, OPTIONS');
    expect(ok.headers!['Access-Control-Allow-Origin']).toBe(ORIGINS[1]);
    const denied = await fn(event('OPTIONS', '/api/v1/secrets', { origin: 'https://evil.example.com', 'access-control-request-method': 'POST' }), context);
    expect(denied.statusCode).toBe(403);
    expect(corsNames(denied)).toEqual([]);
    expect(JSON.parse(denied.body)).toMatchObject({ success: false, code: 'forbidden', error: 'CORS preflight refused: origin not allowed' });
    const unknown = await fn(event('OPTIONS', '/api/v1/unknown', { origin: ORIGINS[0]!, 'access-control-request-method': 'GET' }), context);
    expect(unknown.statusCode).toBe(404);
    expect(corsNames(unknown)).toEqual([]);
  });
});

describe('defineHandler with CORS_ALLOWED_ORIGINS set', () => {
  let http: typeof import('../../lib/http/index.js');
  let t: Awaited<ReturnType<typeof table>>;
  beforeAll(async () => {
    t = await table();
    // before the first config() of this process
    process.env.CORS_ALLOWED_ORIGINS = ORIGINS.join(',');
    http = await import('../../lib/http/index.js');
  });

  it('success and error responses carry the headers for an allowed origin, none for another', async () => {
    const h = http.defineHandler({ handler: async () => http.ok({ fine: true }) });
    const ok = await h(event('GET', '/health', { Origin: ORIGINS[0]! }), context);
    expect(ok.statusCode).toBe(200);
    expect(ok.headers).toMatchObject({ 'Access-Control-Allow-Origin': ORIGINS[0], Vary: 'Origin', 'Access-Control-Expose-Headers': EXPOSE_HEADERS.join(', ') });
    const failing = http.defineHandler({
      handler: async () => {
        throw new Error('boom');
      },
    });
    const err = await failing(event('GET', '/health', { origin: ORIGINS[1]! }), context);
    expect(err.statusCode).toBe(500);
    expect(err.headers!['Access-Control-Allow-Origin']).toBe(ORIGINS[1]);
    const unauth = await h(event('GET', '/api/v1/secrets', { Origin: ORIGINS[0]! }), context);
    expect(unauth.statusCode).toBe(401);
    expect(unauth.headers!['Access-Control-Allow-Origin']).toBe(ORIGINS[0]);
    const other = await h(event('GET', '/api/v1/secrets', { Origin: 'https://evil.example.com' }), context);
    expect(other.statusCode).toBe(401);
    expect(corsNames(other)).toEqual([]);
  });

  it('an idempotent replay (an early answer, no middy `after`) carries them too', async () => {
    const tenantId = await t.account();
    const { key } = generateApiKey();
    await t.put({ pk: `KEY#${hashApiKey(key)}`, sk: 'KEY', tenant_id: tenantId, key_id: randomUUID(), scopes: ['secrets:write'], created_by: 'cors@unit.example', expires_at: null });
    let runs = 0;
    const h = http.defineHandler({ handler: async () => http.created({ run: ++runs }) });
    const headers = { Authorization: `Bearer ${key}`, 'Idempotency-Key': `cors-${randomUUID()}`, Origin: ORIGINS[0]! };
    const first = await h(event('POST', '/api/v1/secrets', headers, { body: '{}' }), context);
    expect(first.statusCode).toBe(201);
    const replay = await h(event('POST', '/api/v1/secrets', headers, { body: '{}' }), context);
    expect(replay.headers!['Idempotent-Replayed']).toBe('true');
    expect(JSON.parse(replay.body).data).toEqual({ run: 1 });
    expect(replay.headers!['Access-Control-Allow-Origin']).toBe(ORIGINS[0]);
    const elsewhere = await h(event('POST', '/api/v1/secrets', { ...headers, Origin: 'https://evil.example.com' }, { body: '{}' }), context);
    expect(elsewhere.headers!['Idempotent-Replayed']).toBe('true');
    expect(corsNames(elsewhere)).toEqual([]);
  });
});

import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ApiError,
  createApiClient,
  dataOf,
  errorOf,
  etagOf,
  idempotency,
  ifMatch,
  newIdempotencyKey,
  OAuthError,
  UnexpectedResponseError,
  unwrap,
} from '../../client/index.js';
import { generateClientTypes, SCHEMA_FILE } from '../../scripts/client.js';
import { scaled } from '../helpers/timeouts.js';

const ROOT = resolve(import.meta.dirname, '../..');

describe('client/schema.d.ts', () => {
  it(
    'is what `npm run client` generates from the current OpenAPI document (run it after changing a schema)',
    async () => {
      const fresh = await generateClientTypes();
      expect(readFileSync(SCHEMA_FILE, 'utf8') === fresh, 'client/schema.d.ts is out of date: run `npm run client`').toBe(true);
      // generating builds the OpenAPI document first, which imports every handler module
    },
    scaled(240_000),
  );
});

describe('client/ imports no server code', () => {
  it('every import of client/ is openapi-fetch or a file of client/', () => {
    const specs = readdirSync(join(ROOT, 'client'))
      .filter((f) => f.endsWith('.ts'))
      .flatMap((f) =>
        [...readFileSync(join(ROOT, 'client', f), 'utf8').matchAll(/\bfrom\s+'([^']+)'|import\(\s*'([^']+)'\s*\)/g)].map((m) => m[1] ?? m[2]!),
      );
    expect(specs.filter((s) => s !== 'openapi-fetch' && !/^\.\/[\w.-]+\.js$/.test(s))).toEqual([]);
  });
});

/** A fetch that records each request and answers with the given response. */
function recorder(answer: () => Response) {
  const seen: Request[] = [];
  const fetch = async (request: Request) => {
    seen.push(request);
    return answer();
  };
  return { seen, fetch };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

describe('createApiClient', () => {
  it('sends the bearer token, the base URL without its trailing slash, and per-request headers', async () => {
    const r = recorder(() => json(200, { success: true, data: { secrets: [] } }));
    const api = createApiClient({ baseUrl: 'http://api.test/', token: 'scm_abc', fetch: r.fetch, headers: { 'user-agent': 'cli/1' } });
    const key = idempotency();
    await api.GET('/api/v1/secrets', { headers: { ...key, ...ifMatch('"x.1"') } });
    const req = r.seen[0]!;
    expect(req.url).toBe('http://api.test/api/v1/secrets');
    expect(req.headers.get('authorization')).toBe('Bearer scm_abc');
    expect(req.headers.get('user-agent')).toBe('cli/1');
    expect(req.headers.get('idempotency-key')).toBe(key['Idempotency-Key']);
    expect(req.headers.get('if-match')).toBe('"x.1"');
  });

  it('asks a token function for the current token on each request, and sends none without a token', async () => {
    const r = recorder(() => json(200, { success: true, data: {} }));
    let n = 0;
    const api = createApiClient({ baseUrl: 'http://api.test', token: async () => `t${++n}`, fetch: r.fetch });
    await api.GET('/health');
    await api.GET('/health');
    expect(r.seen.map((q) => q.headers.get('authorization'))).toEqual(['Bearer t1', 'Bearer t2']);
    const anon = createApiClient({ baseUrl: 'http://api.test', fetch: r.fetch });
    await anon.GET('/health');
    expect(r.seen[2]!.headers.has('authorization')).toBe(false);
  });
});

describe('idempotency keys', () => {
  it('a fresh key per operation; the same key when given', () => {
    const a = newIdempotencyKey();
    expect(a).toMatch(/^[0-9a-f-]{36}$/);
    expect(newIdempotencyKey()).not.toBe(a);
    expect(idempotency(a)).toEqual({ 'Idempotency-Key': a });
    expect(idempotency()['Idempotency-Key']).not.toBe(a);
  });
});

describe('results and errors', () => {
  const api = (answer: () => Response) => createApiClient({ baseUrl: 'http://api.test', token: 't', fetch: recorder(answer).fetch });

  it('dataOf returns the envelope data, etagOf the ETag', async () => {
    const res = await api(() => json(200, { success: true, data: { secret: { id: 'x' } } }, { etag: '"x.3"' })).GET('/api/v1/secrets/{name}', {
      params: { path: { name: 'db' } },
    });
    expect(dataOf(res)).toEqual({ secret: { id: 'x' } });
    expect(unwrap(res)).toEqual({ success: true, data: { secret: { id: 'x' } } });
    expect(etagOf(res)).toBe('"x.3"');
    expect(etagOf(res.response)).toBe('"x.3"');
    expect(errorOf(res)).toBeNull();
  });

  it('an error envelope becomes an ApiError with status, code, error, request_id and details', async () => {
    const body = { success: false, error: 'name: too long', code: 'validation_failed', request_id: 'req-1', details: [{ field: 'name' }] };
    const res = await api(() => json(400, body)).GET('/api/v1/secrets');
    const err = errorOf(res);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 400, code: 'validation_failed', error: 'name: too long', request_id: 'req-1', details: [{ field: 'name' }] });
    expect(() => unwrap(res)).toThrow(ApiError);
    expect(() => dataOf(res)).toThrow('400 validation_failed: name: too long (request req-1)');
  });

  it('an envelope without request_id takes the X-Request-Id header, and no details stays undefined', async () => {
    const res = await api(() => json(404, { success: false, error: 'no such secret', code: 'not_found' }, { 'x-request-id': 'hdr' })).GET(
      '/api/v1/secrets',
    );
    expect(errorOf(res)).toMatchObject({ code: 'not_found', request_id: 'hdr', details: undefined });
  });

  it('an RFC 6749 error object becomes an OAuthError', async () => {
    const res = await api(() => json(400, { error: 'authorization_pending', error_description: 'not yet' })).GET('/api/v1/secrets');
    expect(errorOf(res)).toMatchObject({ name: 'OAuthError', status: 400, error: 'authorization_pending', error_description: 'not yet' });
    const bare = await api(() => json(400, { error: 'invalid_grant' })).GET('/api/v1/secrets');
    expect(errorOf(bare)).toBeInstanceOf(OAuthError);
    expect((errorOf(bare) as OAuthError).message).toBe('400 invalid_grant');
  });

  it('any other failure is an UnexpectedResponseError; a success without an envelope fails dataOf', async () => {
    const res = await api(() => new Response('<html>bad gateway</html>', { status: 502 })).GET('/api/v1/secrets');
    expect(errorOf(res)).toBeInstanceOf(UnexpectedResponseError);
    expect(() => unwrap(res)).toThrow('502: unexpected response <html>bad gateway</html>');
    const plain = await api(() => json(200, ['a'])).GET('/api/v1/secrets');
    expect(() => dataOf(plain)).toThrow(UnexpectedResponseError);
  });
});

describe('the typed client refuses what the description does not declare, at compile time', () => {
  // `tsc --noEmit` (npm run typecheck, and the full run's --typecheck) fails when an
  // expect-error directive below has no error to expect: each one proves one refusal
  it('an unknown or misspelled body property, an unknown parameter, and an update without If-Match do not type-check', async () => {
    const r = recorder(() => json(201, { success: true, data: {} }));
    const api = createApiClient({ baseUrl: 'http://api.test', token: 't', fetch: r.fetch });
    const doc = { name: 'contract.pdf', content_base64: 'JVBERi0=' };
    await api.POST('/api/v1/documents', { body: doc }); // the declared shape compiles
    // @ts-expect-error `extra` is no property of the upload body
    await api.POST('/api/v1/documents', { body: { ...doc, extra: 1 } });
    // @ts-expect-error `content_bas64` is misspelled (and the required `content_base64` is then missing)
    await api.POST('/api/v1/documents', { body: { name: 'contract.pdf', content_bas64: 'JVBERi0=' } });
    // @ts-expect-error `descripton` is misspelled
    await api.POST('/api/v1/secrets', { body: { name: 'db', data: { v: 'x' }, descripton: 'typo' } });
    // @ts-expect-error `limt` is no query parameter of the list
    await api.GET('/api/v1/secrets', { params: { query: { limt: 5 } } });
    // @ts-expect-error an update names the version it read: If-Match is required (428 without)
    await api.PUT('/api/v1/secrets/{name}', { params: { path: { name: 'db' } }, body: { description: 'd' } });
    await api.PUT('/api/v1/secrets/{name}', { params: { path: { name: 'db' }, header: ifMatch('"x.1"') }, body: { description: 'd' } });
    // the refused calls still ran (types only): seven requests went out
    expect(r.seen.map((q) => q.method)).toEqual(['POST', 'POST', 'POST', 'POST', 'GET', 'PUT', 'PUT']);
  });
});

import { describe, expect, it } from 'vitest';
import * as e from '../../lib/core/errors.js';
import { created, download, errorResult, ok, SECURITY_HEADERS, successResult } from '../../lib/core/responses.js';

/** lib/core/errors.ts and responses.ts: the status, code and sentence of each error, and the envelopes. */
describe('typed errors', () => {
  it('each constructor: status, code, message and headers', () => {
    const rows: [e.HttpError, number, string, string, Record<string, string> | undefined][] = [
      [e.badRequest('bad'), 400, 'bad_request', 'bad', undefined],
      [e.badRequest('bad', undefined, 'json_too_deep'), 400, 'json_too_deep', 'bad', undefined],
      [e.validationFailed([{ path: 'body.a', message: 'm' }]), 400, 'validation_failed', 'request validation failed', undefined],
      [e.unauthorized(), 401, 'unauthorized', 'missing, invalid or expired credentials', { 'WWW-Authenticate': 'Bearer' }],
      [e.unauthorized('x', 'credentials_expired'), 401, 'credentials_expired', 'x', { 'WWW-Authenticate': 'Bearer' }],
      [e.forbidden(), 403, 'forbidden', 'access denied', undefined],
      [e.forbidden('no', 'insufficient_scope'), 403, 'insufficient_scope', 'no', undefined],
      [e.notFound(), 404, 'not_found', 'resource not found', undefined],
      [e.notFound('secret'), 404, 'not_found', 'secret not found', undefined],
      [e.conflict('c'), 409, 'conflict', 'c', undefined],
      [e.conflict('c', 'stale_etag'), 409, 'stale_etag', 'c', undefined],
      [e.preconditionFailed('p'), 412, 'precondition_failed', 'p', undefined],
      [e.payloadTooLarge(10), 413, 'payload_too_large', 'request body exceeds the 10 byte limit of this route', undefined],
      [e.unsupportedMediaType(), 415, 'unsupported_media_type', 'request body must be JSON (Content-Type: application/json)', undefined],
      [e.tooManyRequests(0.2), 429, 'rate_limited', 'too many requests; retry later', { 'Retry-After': '1' }],
      [e.tooManyRequests(2.1), 429, 'rate_limited', 'too many requests; retry later', { 'Retry-After': '3' }],
      [e.notImplemented(), 501, 'not_implemented', 'not implemented', undefined],
      [e.serviceUnavailable('down'), 503, 'service_unavailable', 'down', undefined],
      [e.badGateway('hsm'), 502, 'device_error', 'hsm', undefined],
      [e.routeNotFound(), 404, 'route_not_found', 'no route matches this path', undefined],
      [e.methodNotAllowed(['GET', 'PUT']), 405, 'method_not_allowed', 'method not allowed on this path', { Allow: 'GET, PUT' }],
      [e.internalError(), 500, 'internal_error', 'internal error', undefined],
    ];
    for (const [error, status, code, message, headers] of rows) {
      expect({ status: error.status, code: error.code, message: error.message, headers: error.options.headers, name: error.name }).toEqual({ status, code, message, headers, name: 'HttpError' });
    }
    expect(e.validationFailed([{ path: 'p', message: 'm' }]).options.details).toEqual([{ path: 'p', message: 'm' }]);
    expect(e.badRequest('b', [{ path: 'q', message: 'n' }]).options.details).toEqual([{ path: 'q', message: 'n' }]);
    expect(e.badRequest('b').options).toEqual({});
  });

  it('expose: below 500 by default; 5xx only where the error allows it', () => {
    expect(e.badRequest('x').expose).toBe(true);
    expect(e.methodNotAllowed([]).expose).toBe(true);
    expect(e.internalError().expose).toBe(false);
    expect(new e.HttpError(500, 'c', 'm').expose).toBe(false);
    expect(new e.HttpError(499, 'c', 'm').expose).toBe(true);
    expect(e.notImplemented().expose).toBe(true);
    expect(e.serviceUnavailable('x').expose).toBe(true);
    expect(e.badGateway('x').expose).toBe(true);
    expect(new e.HttpError(400, 'c', 'm', { expose: false }).expose).toBe(false);
  });

  it('causes are kept for the logs', () => {
    const cause = new Error('root');
    expect(e.internalError(cause).cause).toBe(cause);
    expect(e.serviceUnavailable('x', cause).options.cause).toBe(cause);
    expect(e.badGateway('x', cause).options.cause).toBe(cause);
  });

  it('toHttpError: an HttpError as it is; anything else an opaque 500 with the cause', () => {
    const known = e.conflict('c');
    expect(e.toHttpError(known)).toBe(known);
    const wrapped = e.toHttpError(new TypeError('secret detail'));
    expect(wrapped).toMatchObject({ status: 500, code: 'internal_error', message: 'internal error' });
    expect((wrapped.options.cause as Error).message).toBe('secret detail');
    expect(e.toHttpError('a string')).toMatchObject({ status: 500 });
  });
});

describe('envelopes', () => {
  it('the security headers on every response', () => {
    expect(SECURITY_HEADERS).toEqual({
      'Content-Type': 'application/json; charset=utf-8',
      'Cache-Control': 'no-store',
      Pragma: 'no-cache',
      'X-Content-Type-Options': 'nosniff',
      'X-Frame-Options': 'DENY',
      'Referrer-Policy': 'no-referrer',
      'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
      'Strict-Transport-Security': 'max-age=63072000; includeSubDomains',
    });
  });

  it('success: status, headers (the reply may add but not drop the request id), the data envelope', () => {
    expect(ok({ a: 1 })).toEqual({ status: 200, data: { a: 1 }, headers: undefined });
    expect(created({ b: 2 }, { ETag: '"x"' })).toEqual({ status: 201, data: { b: 2 }, headers: { ETag: '"x"' } });
    const result = successResult(created({ b: 2 }, { ETag: '"x"', 'X-Request-Id': 'forged' }), 'req-1');
    expect(result).toEqual({ statusCode: 201, headers: { ...SECURITY_HEADERS, ETag: '"x"', 'X-Request-Id': 'req-1' }, body: '{"success":true,"data":{"b":2}}' });
  });

  it('download: the body as is with its content type', () => {
    const reply = download('a,b\n', 'text/csv; charset=utf-8', { 'Content-Disposition': 'attachment' });
    expect(reply).toEqual({ status: 200, data: null, raw: 'a,b\n', headers: { 'Content-Disposition': 'attachment', 'Content-Type': 'text/csv; charset=utf-8' } });
    expect(successResult(reply, 'r')).toMatchObject({ body: 'a,b\n', headers: { 'Content-Type': 'text/csv; charset=utf-8', 'X-Request-Id': 'r' } });
  });

  it('errors: the sentence unless a 5xx hides it, details only when there are some, headers of the error', () => {
    expect(JSON.parse(errorResult(e.validationFailed([{ path: 'body.a', message: 'm' }]), 'r1').body)).toEqual({
      success: false,
      error: 'request validation failed',
      code: 'validation_failed',
      request_id: 'r1',
      details: [{ path: 'body.a', message: 'm' }],
    });
    expect(JSON.parse(errorResult(e.validationFailed([]), 'r').body)).not.toHaveProperty('details');
    expect(JSON.parse(errorResult(e.internalError(new Error('db password is hunter2')), 'r2').body)).toEqual({
      success: false,
      error: 'internal error',
      code: 'internal_error',
      request_id: 'r2',
    });
    expect(JSON.parse(errorResult(new e.HttpError(500, 'x', 'inner detail'), 'r').body).error).toBe('internal error');
    const limited = errorResult(e.tooManyRequests(5), 'r3');
    expect(limited).toMatchObject({ statusCode: 429, headers: { ...SECURITY_HEADERS, 'Retry-After': '5', 'X-Request-Id': 'r3' } });
  });
});

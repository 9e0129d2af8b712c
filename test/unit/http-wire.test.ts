import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { parseForm, parseRequestBody } from '../../lib/http/body.js';
import * as e from '../../lib/core/errors.js';
import { errorResult, OAUTH_ERRORS, protocol, SECURITY_HEADERS, successResult } from '../../lib/core/responses.js';
import { ROUTES, wireOf } from '../../lib/routes.js';

/**
 * The wire rule (lib/routes.ts `Wire`): standard endpoints speak their standard, not the
 * envelope. Which routes are protocol routes, how each wire answers success and error, and
 * how an OAuth route reads a form-encoded body.
 */
describe('which routes speak a protocol', () => {
  it('every JWKS, discovery, OAuth token/device, CLI login, ACME challenge and SAML metadata XML route has its wire; all others the envelope', () => {
    const wires = Object.fromEntries(ROUTES.filter((r) => wireOf(r) !== 'envelope').map((r) => [r.key, wireOf(r)]));
    expect(wires).toEqual({
      'GET /.well-known/acme-challenge/{token}': 'text',
      'GET /api/v1/.well-known/jwks.json': 'document',
      'GET /api/v1/oidc/jwks/.well-known': 'document',
      'GET /api/v1/auth/oauth/.well-known/openid-configuration': 'document',
      'GET /api/v1/auth/oauth/jwks': 'document',
      'GET /.well-known/oauth-authorization-server/{issuerPath+}': 'document',
      'POST /api/v1/auth/oauth/token': 'oauth',
      'GET /api/v1/auth/oauth/userinfo': 'oauth',
      'POST /api/v1/auth/oauth/userinfo': 'oauth',
      'POST /api/v1/auth/oauth/introspect': 'oauth',
      'POST /api/v1/auth/workload/token': 'oauth',
      'POST /api/v1/agent/oauth/device': 'oauth',
      'POST /api/v1/agent/oauth/token': 'oauth',
      'GET /api/v1/auth/cli/login': 'oauth',
      'POST /api/v1/auth/cli/login': 'oauth',
      'POST /api/v1/auth/cli/token': 'oauth',
      'POST /api/v1/auth/cli/revoke': 'oauth',
      'GET /api/v1/saml/metadata/{id}/xml': 'text',
    });
    // no standard endpoint is left behind: every path that names one is a protocol route
    for (const r of ROUTES.filter((x) =>
      /\.well-known|\/oauth\/(token|device|jwks|userinfo|introspect)$|\/auth\/cli\/|\/metadata\/\{id\}\/xml$/.test(x.path),
    ))
      expect(wireOf(r), r.key).not.toBe('envelope');
    expect(wireOf(undefined)).toBe('envelope');
  });
});

describe('answers by wire', () => {
  it('document: the payload at the top level with its own content type and caching (no Pragma fallback)', () => {
    const set = { keys: [{ kty: 'OKP', crv: 'Ed25519', x: 'abc' }] };
    const result = successResult(
      protocol(set, { 'Content-Type': 'application/jwk-set+json', 'Cache-Control': 'private, max-age=300' }),
      'r1',
      'document',
    );
    expect(JSON.parse(result.body)).toEqual(set);
    expect(result.headers).toMatchObject({
      'Content-Type': 'application/jwk-set+json',
      'Cache-Control': 'private, max-age=300',
      'X-Request-Id': 'r1',
    });
    expect(result.headers).not.toHaveProperty('Pragma');
    // 304: no body
    expect(successResult(protocol(null, {}, 304), 'r2', 'document')).toMatchObject({ statusCode: 304, body: '' });
    // the same reply on an envelope route is wrapped
    expect(JSON.parse(successResult(protocol(set), 'r3').body)).toEqual({ success: true, data: set });
  });

  it('text: the string as it is', () => {
    expect(successResult(protocol('tok.thumb', { 'Content-Type': 'text/plain; charset=utf-8' }), 'r', 'text')).toMatchObject({
      body: 'tok.thumb',
      headers: { 'Content-Type': 'text/plain; charset=utf-8' },
    });
  });

  it('oauth success: the RFC object at the top level, never cached', () => {
    const result = successResult(protocol({ access_token: 'at', token_type: 'Bearer', expires_in: 60 }), 'r', 'oauth');
    expect(JSON.parse(result.body)).toEqual({ access_token: 'at', token_type: 'Bearer', expires_in: 60 });
    expect(result.headers).toMatchObject({ 'Cache-Control': 'no-store', Pragma: 'no-cache' });
  });

  it('oauth errors: {error, error_description} with the RFC code (kept, or mapped from the status), never the envelope', () => {
    const body = (err: e.HttpError) => JSON.parse(errorResult(err, 'r', 'oauth').body);
    expect(body(new e.HttpError(400, 'slow_down', 'wait at least 10 s'))).toEqual({ error: 'slow_down', error_description: 'wait at least 10 s' });
    for (const code of OAUTH_ERRORS) expect(body(new e.HttpError(400, code, 'x')).error).toBe(code);
    expect(body(e.validationFailed([{ path: 'body.device_code', message: 'Required' }]))).toEqual({
      error: 'invalid_request',
      error_description: 'request validation failed; body.device_code: Required',
    });
    expect(body(e.unsupportedMediaType()).error).toBe('invalid_request');
    expect(body(e.unauthorized()).error).toBe('invalid_client');
    expect(body(e.forbidden()).error).toBe('access_denied');
    expect(body(e.tooManyRequests(3)).error).toBe('slow_down');
    expect(body(e.serviceUnavailable('down')).error).toBe('temporarily_unavailable');
    expect(body(e.internalError(new Error('secret detail')))).toEqual({ error: 'server_error', error_description: 'internal error' });
    // only the characters RFC 6749 allows in error_description
    expect(body(e.badRequest('a "quoted" \\ name\n'))).toEqual({ error: 'invalid_request', error_description: "a 'quoted'   name " });
    const result = errorResult(e.tooManyRequests(3), 'r', 'oauth');
    expect(result.statusCode).toBe(429);
    expect(result.headers).toMatchObject({ ...SECURITY_HEADERS, 'Retry-After': '3', 'X-Request-Id': 'r' });
  });

  it('document and text errors stay envelopes', () => {
    for (const wire of ['document', 'text'] as const)
      expect(JSON.parse(errorResult(e.notFound('challenge'), 'r', wire).body)).toMatchObject({ success: false, code: 'not_found' });
  });
});

describe('request bodies by wire', () => {
  const event = (body: string | null, type?: string): APIGatewayProxyEvent =>
    ({ body, isBase64Encoded: false, headers: type ? { 'Content-Type': type } : {} }) as unknown as APIGatewayProxyEvent;

  it('an oauth route reads application/x-www-form-urlencoded (RFC 6749 §3.2) and JSON', () => {
    const form = 'grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code&device_code=a+b%2Bc&client_id=cli';
    expect(parseRequestBody(event(form, 'application/x-www-form-urlencoded;charset=UTF-8'), 'oauth', 16)).toEqual({
      grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
      device_code: 'a b+c',
      client_id: 'cli',
    });
    expect(parseRequestBody(event('{"device_code":"x"}', 'application/json'), 'oauth', 16)).toEqual({ device_code: 'x' });
    expect(parseRequestBody(event(null, 'application/x-www-form-urlencoded'), 'oauth', 16)).toBeUndefined();
  });

  it('a parameter given twice is refused (RFC 6749 §3.1); prototype names are plain members', () => {
    expect(() => parseForm('a=1&a=2')).toThrow(
      expect.objectContaining({ status: 400, code: 'invalid_request', message: 'parameter "a" is given more than once' }),
    );
    const parsed = parseForm('__proto__=x&constructor=y');
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(parsed).toEqual(JSON.parse('{"__proto__":"x","constructor":"y"}'));
  });

  it('an envelope route refuses form bodies with 415; an oauth route refuses other types, naming the form type', () => {
    expect(() => parseRequestBody(event('a=1', 'application/x-www-form-urlencoded'), 'envelope', 16)).toThrow(
      expect.objectContaining({ status: 415, message: 'request body must be JSON (Content-Type: application/json)' }),
    );
    expect(() => parseRequestBody(event('a=1', 'text/plain'), 'oauth', 16)).toThrow(
      expect.objectContaining({ status: 415, message: expect.stringMatching(/x-www-form-urlencoded/) }),
    );
  });
});

import { beforeAll, describe, expect, it } from 'vitest';
import { api, errorCode, newAccount, type TestAccount } from '../helpers/api.js';
import { ARTIFACT_CORS_ORIGIN } from '../helpers/artifact.js';

/**
 * CORS as deployed with context corsOrigins (test/setup/artifact.ts synthesizes with one
 * allowed origin): the OPTIONS methods of the family stacks, integrated with the one
 * preflight function, and the headers every built function adds, through API Gateway's
 * emulation of the synthesized templates.
 */
const OTHER = 'https://evil.example.test';

let acct: TestAccount;
beforeAll(async () => {
  acct = await newAccount('cors');
});

const preflight = (path: string, origin: string, method: string, headers = 'authorization, content-type') =>
  api('OPTIONS', path, { headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers } });

describe('CORS through the built artifact', () => {
  it('answers a preflight from the allowed origin with the path methods and the request headers a page may send', async () => {
    const res = await preflight('/api/v1/secrets/some-name', ARTIFACT_CORS_ORIGIN, 'PUT');
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(ARTIFACT_CORS_ORIGIN);
    expect(res.headers.get('access-control-allow-methods')?.split(', ').sort()).toEqual(['DELETE', 'GET', 'OPTIONS', 'PUT']);
    expect(res.headers.get('access-control-allow-headers')).toBe('Authorization, Content-Type, If-Match, Idempotency-Key');
    expect(res.headers.get('access-control-max-age')).toBe('600');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('refuses a preflight from another origin or for a method the path lacks, without any CORS header', async () => {
    for (const res of [await preflight('/api/v1/secrets', OTHER, 'GET'), await preflight('/api/v1/secrets', ARTIFACT_CORS_ORIGIN, 'PATCH')]) {
      expect(res.status).toBe(403);
      expect(errorCode(res)).toBe('forbidden');
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    }
  });

  it('adds the headers to function responses, errors included, for the allowed origin only', async () => {
    const ok = await api('GET', '/api/v1/secrets', { key: acct.adminKey, headers: { origin: ARTIFACT_CORS_ORIGIN } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe(ARTIFACT_CORS_ORIGIN);
    expect(ok.headers.get('vary')).toContain('Origin');
    expect(ok.headers.get('access-control-expose-headers')).toBe('ETag, X-Request-Id, Retry-After, Idempotent-Replayed');
    const unauthenticated = await api('GET', '/api/v1/secrets', { headers: { origin: ARTIFACT_CORS_ORIGIN } });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get('access-control-allow-origin')).toBe(ARTIFACT_CORS_ORIGIN);
    const other = await api('GET', '/api/v1/secrets', { key: acct.adminKey, headers: { origin: OTHER } });
    expect(other.status).toBe(200);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    expect(other.headers.get('access-control-expose-headers')).toBeNull();
  });

  it('a gateway error (no such path) carries the single allowed origin, as the gateway responses are configured', async () => {
    const res = await api('GET', '/api/v1/no/such/path', { headers: { origin: ARTIFACT_CORS_ORIGIN } });
    expect(res.status).toBe(404);
    expect(errorCode(res)).toBe('route_not_found');
    expect(res.headers.get('access-control-allow-origin')).toBe(ARTIFACT_CORS_ORIGIN);
  });
});

import { beforeAll, describe, expect, inject, it } from 'vitest';
import { ROUTES, type Route } from '../../lib/routes.js';
import { api, errorCode, newAccount, rootKey, type TestAccount } from '../helpers/api.js';

/**
 * Every one of the 322 routes, driven by the route table: authentication and the route's
 * scopes are enforced the same way whether the capability is built or not, and exactly
 * the unbuilt routes answer 501 once the caller is allowed through.
 */
const concrete = (r: Route) =>
  r.path.replace(/\{(\w+)\}/g, (_m, name: string) =>
    name === 'type' ? 'password' : `00000000-0000-7000-8000-00000000${String(name.length).padStart(4, '0')}`,
  );

/** A scope none of the checked routes requires, to prove 403 without the scope. */
const otherScope = (r: Route) => (r.scopes.includes('intelligence:read') ? 'ldap:use' : 'intelligence:read');

let account: TestAccount;
beforeAll(async () => {
  account = await newAccount('matrix');
});

describe.each(ROUTES.filter((r) => r.auth === 'bearer' || r.auth === 'operator'))('$key', (route) => {
  it('401 without credentials', async () => {
    const res = await api(route.method, concrete(route));
    expect(res.status).toBe(401);
    expect(errorCode(res)).toBe('unauthorized');
    expect(res.headers.get('x-request-id')).toBeTruthy();
  });

  it('401 with X-API-Key only', async () => {
    const res = await api(route.method, concrete(route), { headers: { 'x-api-key': account.adminKey } });
    expect(res.status).toBe(401);
    expect(errorCode(res)).toBe('unsupported_credentials');
  });

  if (route.auth === 'operator') {
    it('403 for an account admin that is not a platform operator', async () => {
      const res = await api(route.method, concrete(route), { key: account.adminKey });
      expect(res.status).toBe(403);
      expect(errorCode(res)).toBe('operator_required');
    });
  } else if (route.scopes.length > 0) {
    it(`403 without ${route.scopes.join(' + ')}`, async () => {
      const key = await account.key([otherScope(route)]);
      const res = await api(route.method, concrete(route), { key });
      expect(res.status).toBe(403);
      expect(errorCode(res)).toBe('insufficient_scope');
    });
  }

  it(route.handler ? 'is built: never 501 once allowed through' : '501 not_implemented once allowed through', async () => {
    const key = route.auth === 'operator' ? rootKey() : account.adminKey;
    const res = await api(route.method, concrete(route), { key, body: route.method === 'GET' ? undefined : {} });
    if (route.handler) expect(res.status).not.toBe(501);
    else {
      expect(res.status).toBe(501);
      expect(res.body).toMatchObject({ success: false, error: 'not implemented', code: 'not_implemented' });
    }
  });
});

/**
 * Protocol endpoints that authenticate by their standard's own bearer scheme: OIDC userinfo
 * answers a missing token with RFC 6750's 401 and `WWW-Authenticate: Bearer`, not our envelope.
 */
const STANDARD_BEARER = new Set(['GET /api/v1/auth/oauth/userinfo', 'POST /api/v1/auth/oauth/userinfo']);

describe.each(ROUTES.filter((r) => r.auth !== 'bearer' && r.auth !== 'operator'))('$key ($auth)', (route) => {
  const title = STANDARD_BEARER.has(route.key)
    ? 'is built and asks for its standard bearer token (401)'
    : route.handler
      ? 'is built and needs no bearer token'
      : 'answers without a bearer token';
  it(title, async () => {
    const res = await api(route.method, concrete(route), { body: route.method === 'GET' ? undefined : {} });
    if (STANDARD_BEARER.has(route.key)) {
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    } else if (route.auth === 'device') expect(res.status).toBe(401);
    else if (route.handler) expect([200, 400, 404, 410]).toContain(res.status);
    else expect(res.status).toBe(501);
  });
});

describe('gateway', () => {
  it('404 route_not_found for an unknown path; for a known path with another method, 405 with Allow locally and 404 as deployed', async () => {
    const unknown = await api('GET', '/api/v1/no/such/route/here');
    expect(unknown.status).toBe(404);
    expect(errorCode(unknown)).toBe('route_not_found');
    const wrong = await api('PATCH', '/api/v1/secrets');
    if (inject('runtime') === 'artifact') {
      // API Gateway answers an undefined method as MISSING_AUTHENTICATION_TOKEN, which the
      // deployment's gateway responses turn into 404 route_not_found (infra/gateway-responses.ts)
      expect(wrong.status).toBe(404);
      expect(errorCode(wrong)).toBe('route_not_found');
      expect(wrong.headers.get('x-content-type-options')).toBe('nosniff');
    } else {
      expect(wrong.status).toBe(405);
      expect(errorCode(wrong)).toBe('method_not_allowed');
      expect(wrong.headers.get('allow')).toBe('GET, POST');
    }
  });

  it('sets security headers and a request id on every response', async () => {
    const res = await api('GET', '/health');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('strict-transport-security')).toMatch(/max-age=/);
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

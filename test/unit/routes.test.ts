import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROUTES, ROUTES_BEYOND_CONTRACT, KNOWN_SCOPES, routeByKey } from '../../lib/routes.js';
import { buildRouter } from '../../scripts/local/router.js';
import { loadHandlers } from '../../scripts/local/gateway.js';

/** The contract's route list, copied from the spec into the project (a clone has no ../shared). */
function contractRoutes() {
  return readFileSync('test/fixtures/routes.tsv', 'utf8')
    .split('\n')
    .filter((l) => l && !l.startsWith('#') && !l.startsWith('method\t'))
    .map((l) => {
      const [method, path, auth, scopes, family] = l.split('\t');
      return { method, path, auth, scopes, family };
    });
}

describe('route table', () => {
  it('equals the contract: 322 routes, same methods, paths, auth kinds, scopes and families, in order; then the few beyond it', () => {
    const contract = contractRoutes();
    expect(contract).toHaveLength(322);
    expect(ROUTES).toHaveLength(322 + ROUTES_BEYOND_CONTRACT.length);
    expect(ROUTES.slice(322)).toEqual(ROUTES_BEYOND_CONTRACT);
    const ours = ROUTES.slice(0, 322).map((r) => ({
      method: r.method,
      path: r.path,
      auth: r.auth,
      scopes: r.handlerScopes ? 'handler' : r.scopes.length === 0 ? '-' : r.scopes.join(' '),
      family: r.family,
    }));
    expect(ours).toEqual(contract);
  });

  it('has unique keys and finds each route by its key', () => {
    expect(new Set(ROUTES.map((r) => r.key)).size).toBe(ROUTES.length);
    for (const r of ROUTES) expect(routeByKey(r.method, r.path)).toBe(r);
  });

  it('knows every scope the routes require', () => {
    for (const r of ROUTES) for (const s of r.scopes) expect(KNOWN_SCOPES).toContain(s);
  });

  it('gives public routes no grants and every other route table read and metering', () => {
    for (const r of ROUTES) {
      if (r.auth === 'public') expect(r.grants.filter((g) => g === 'table:meter')).toEqual([]);
      else expect(r.grants).toEqual(expect.arrayContaining(['table:read', 'table:meter']));
    }
  });

  it('resolves every handler reference to a function export (the 501 handler for unbuilt routes)', async () => {
    const handlers = await loadHandlers();
    expect(handlers.size).toBe(ROUTES.length);
    for (const fn of handlers.values()) expect(typeof fn).toBe('function');
  });

  it('needs fewer than 300 API Gateway resources (the REST API quota)', () => {
    const resources = new Set<string>();
    for (const r of ROUTES) {
      const segs = r.path.split('/').filter(Boolean);
      for (let i = 1; i <= segs.length; i++) resources.add(segs.slice(0, i).join('/'));
    }
    expect(resources.size).toBeLessThan(300);
  });
});

describe('local router', () => {
  const match = buildRouter();

  it('matches every route template to itself', () => {
    for (const r of ROUTES) {
      const path = r.path.replace(/\{(\w+)\+?\}/g, 'p-$1');
      const m = match(r.method, path);
      expect(m.kind === 'route' && m.route.key, r.key).toBe(r.key);
    }
  });

  it('a greedy {name+} parameter takes the rest of the path, one segment or more, as API Gateway does', () => {
    const rfc8414 = match('GET', '/.well-known/oauth-authorization-server/api/v1/auth/oauth');
    expect(rfc8414).toMatchObject({ kind: 'route', params: { issuerPath: 'api/v1/auth/oauth' } });
    expect(rfc8414.kind === 'route' && rfc8414.route.key).toBe('GET /.well-known/oauth-authorization-server/{issuerPath+}');
    expect(match('GET', '/.well-known/oauth-authorization-server').kind).toBe('not_found');
    // a literal sibling still wins
    const acme = match('GET', '/.well-known/acme-challenge/t1');
    expect(acme.kind === 'route' && acme.route.path).toBe('/.well-known/acme-challenge/{token}');
  });

  it('prefers literal segments and backtracks to parameters', () => {
    const jwks = match('GET', '/api/v1/oidc/jwks/.well-known');
    expect(jwks.kind === 'route' && jwks.route.path).toBe('/api/v1/oidc/jwks/.well-known');
    const history = match('GET', '/api/v1/ssh_key/abc/history');
    expect(history.kind === 'route' && history.route.path).toBe('/api/v1/{type}/{id}/history');
    const secret = match('GET', '/api/v1/secrets/db-password');
    expect(secret.kind === 'route' && secret.params).toEqual({ name: 'db-password' });
  });

  it('tells an unknown path from a known path with another method', () => {
    expect(match('GET', '/api/v1/nothing-here/at/all/x').kind).toBe('not_found');
    const m = match('PATCH', '/api/v1/secrets');
    expect(m).toEqual({ kind: 'method_not_allowed', allow: ['GET', 'POST'] });
  });
});

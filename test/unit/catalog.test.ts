import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CATALOG, RESOURCE_TYPES, resourceType, secretReadScopes, type CatalogEntry } from '../../lib/catalog.js';
import { ROUTES } from '../../lib/routes.js';
import { CREDENTIAL_TYPES } from '../api/credential-types.js';

/**
 * Every scope check of a stored type derives from lib/catalog.ts. This test derives, from
 * the catalogue alone, the scopes each route of each type must carry, and compares them
 * with the contract's route list (test/fixtures/routes.tsv) and with the rules the
 * cross-type routes (history, shares, temporary access, lookup) apply.
 */
interface ContractRoute {
  readonly method: string;
  readonly path: string;
  readonly scopes: string;
  readonly family: string;
}

const CONTRACT: readonly ContractRoute[] = readFileSync('test/fixtures/routes.tsv', 'utf8')
  .split('\n')
  .filter((l) => l && !l.startsWith('#') && !l.startsWith('method\t'))
  .map((l) => {
    const [method, path, , scopes, family] = l.split('\t') as [string, string, string, string, string];
    return { method, path, scopes, family };
  });

const sorted = (s: readonly string[]) => [...s].sort().join(' ');
const contractScopes = (r: ContractRoute) => (r.scopes === '-' || r.scopes === 'handler' ? r.scopes : sorted(r.scopes.split(' ')));

type Operation = 'read' | 'write' | 'delete' | 'export';

/** The operation of a route of a type, from its method and the path after the collection; undefined for other sub-routes. */
function operation(method: string, rest: string): Operation | undefined {
  if (rest === '') return method === 'GET' ? 'read' : method === 'POST' ? 'write' : undefined;
  if (/^\/\{(id|name)\}$/.test(rest)) return ({ GET: 'read', PUT: 'write', DELETE: 'delete' } as Record<string, Operation>)[method];
  if (method === 'POST' && (rest === '/generate' || rest === '/import' || rest === '/enroll' || rest === '/{id}/renew')) return 'write';
  if (method === 'POST' && rest === '/{id}/revoke') return 'delete';
  if (method === 'GET' && (rest === '/{id}/export' || rest === '/{id}/pkcs12')) return 'export';
  return undefined;
}

/** The contract's routes of one type with the operation the catalogue names for each. */
function routesOf(e: CatalogEntry): { route: ContractRoute; op: Operation }[] {
  return CONTRACT.flatMap((route) => {
    if (route.path !== e.path && !route.path.startsWith(`${e.path}/`)) return [];
    const op = operation(route.method, route.path.slice(e.path.length));
    // totp export is its otpauth URI (a read); its secret is not key material
    if (op === 'export' && !e.key) return [{ route, op: 'read' as const }];
    return op ? [{ route, op }] : [];
  });
}

describe('resource catalogue', () => {
  it('names every type once, with its collection path, list key and family', () => {
    const all = Object.values(CATALOG) as CatalogEntry[];
    expect(new Set(all.map((e) => e.type)).size).toBe(all.length);
    for (const [name, e] of Object.entries(CATALOG)) {
      expect(e.type).toBe(name);
      expect(e.path).toBe(`/api/v1/${e.collection}`);
      expect(e.listKey).toBe(e.collection.replace(/-/g, '_'));
      for (const { route } of routesOf(e)) expect(route.family, `${route.method} ${route.path}`).toBe(e.family);
    }
    expect(RESOURCE_TYPES.map((e) => e.type)).not.toContain('certificate_authority');
  });

  it('derives the scopes of every route of every type, equal to the contract route list', () => {
    let compared = 0;
    for (const e of Object.values(CATALOG) as CatalogEntry[]) {
      if (!e.crossType) continue;
      const routes = routesOf(e);
      expect(routes.length, e.type).toBeGreaterThan(0);
      for (const { route, op } of routes) {
        const key = `${route.method} ${route.path}`;
        // "handler": the handler checks the catalogue's scopes itself (lib/keys/common.ts, lib/credentials/access.ts, certificates)
        if (route.scopes === 'handler') continue;
        expect(contractScopes(route), `${key} (${e.type} ${op})`).toBe(sorted(e.scopes[op]));
        compared++;
      }
    }
    expect(compared).toBeGreaterThanOrEqual(140);
  });

  it('the route table carries the same scopes (its collection rows are made from the catalogue)', () => {
    for (const e of RESOURCE_TYPES) {
      for (const { route, op } of routesOf(e)) {
        const ours = ROUTES.find((r) => r.method === route.method && r.path === route.path)!;
        if (ours.handlerScopes) continue;
        expect(sorted(ours.scopes), ours.key).toBe(sorted(e.scopes[op]));
      }
    }
  });

  it('the cross-type checks apply the rules of the type own routes', () => {
    for (const e of RESOURCE_TYPES) {
      const own = routesOf(e);
      const get = own.find((r) => r.op === 'read' && /\{(id|name)\}$/.test(r.route.path) && r.route.method === 'GET');
      // history versions, temporary access and container lookup open the secret part: the read
      // scope, and for key material exactly what the type's own export route requires
      if (get && get.route.scopes !== 'handler')
        expect(sorted(secretReadScopes(e)), e.type).toBe(sorted(e.key ? e.scopes.export : contractScopes(get.route).split(' ')));
      const exportRoute = own.find((r) => r.op === 'export');
      if (exportRoute && exportRoute.route.scopes !== 'handler') expect(sorted(secretReadScopes(e)), e.type).toBe(contractScopes(exportRoute.route));
      if (e.key) {
        expect(e.scopes.export, e.type).toEqual(expect.arrayContaining(['export:read', ...e.scopes.read]));
      } else {
        expect(secretReadScopes(e)).toEqual(e.scopes.read);
      }
      expect(resourceType(e.type)).toBe(e);
    }
    // the seven key kinds: both routes need credentials:write (the contract), so do their cross-type reads
    expect(secretReadScopes(CATALOG.age_key)).toEqual(['credentials:write', 'export:read']);
    expect(CATALOG.openssl_key.scopes.write).toEqual(['credentials:read', 'credentials:write']);
  });

  it('every typed credential collection has its spec, and the catalogue says which fields it hides or withholds', () => {
    const typed = RESOURCE_TYPES.filter((e) => e.family === 'credentials' || e.family === 'passwords' || e.family === 'tokens');
    expect(CREDENTIAL_TYPES.map((t) => t.type).sort()).toEqual(typed.map((e) => e.type).sort());
    for (const t of CREDENTIAL_TYPES) {
      for (const f of t.withheld ?? []) expect(t.secret, `${t.type}.${f}`).toContain(f);
      expect(t.scopes).toBe(resourceType(t.type)!.scopes);
    }
  });
});

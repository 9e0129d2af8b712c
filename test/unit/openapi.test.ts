import { describe, expect, it } from 'vitest';
import { buildOpenApi } from '../../scripts/openapi.js';

describe('OpenAPI document', () => {
  it('has all 322 operations with their auth, scopes and the secrets body schema', async () => {
    const doc = await buildOpenApi();
    const ops = Object.values(doc.paths).flatMap((p) => Object.values(p));
    expect(ops).toHaveLength(322);
    const create = doc.paths['/api/v1/secrets']!.post as any;
    expect(create['x-scopes']).toEqual(['secrets:write']);
    expect(create.requestBody.content['application/json'].schema.required).toEqual(['name', 'data']);
    expect(create.requestBody.content['application/json'].schema.additionalProperties).toBe(false);
    const list = doc.paths['/api/v1/secrets']!.get as any;
    expect(list.parameters.find((p: any) => p.name === 'limit').schema).toMatchObject({ minimum: 1, maximum: 1000, default: 100 });
    expect((doc.paths['/health']!.get as any).security).toEqual([]);
  });
});

describe('OpenAPI request bodies', () => {
  it('every create and update operation of a built route describes its body (the bodiless tenant activate/suspend actions and sign-out aside)', async () => {
    const doc = await buildOpenApi();
    const { ROUTES } = await import('../../lib/routes.js');
    const empty = ROUTES.filter((r) => r.handler && (r.method === 'POST' || r.method === 'PUT' || r.method === 'PATCH'))
      .filter((r) => {
        const s = (doc.paths[r.path] as any)[r.method.toLowerCase()].requestBody?.content?.['application/json']?.schema;
        return !s || Object.keys(s).filter((k) => k !== '$schema').length === 0;
      })
      .map((r) => r.key);
    expect(empty).toEqual(['POST /api/v1/auth/oidc/logout', 'PATCH /api/v1/admin/tenants/{id}/activate', 'PATCH /api/v1/admin/tenants/{id}/suspend']);
    const wifi = (doc.paths['/api/v1/wifi-credentials']!.post as any).requestBody.content['application/json'].schema;
    expect(wifi.required).toEqual(expect.arrayContaining(['name', 'ssid']));
  });
});

describe('OpenAPI wire formats', () => {
  it('protocol routes describe their own formats: OAuth form bodies and error objects, top-level documents, plain text', async () => {
    const doc = await buildOpenApi();
    const token = doc.paths['/api/v1/agent/oauth/token']!.post as any;
    expect(token['x-wire']).toBe('oauth');
    expect(Object.keys(token.requestBody.content)).toEqual(['application/x-www-form-urlencoded', 'application/json']);
    expect(token.responses['400'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/OAuthError' });
    const jwks = doc.paths['/api/v1/.well-known/jwks.json']!.get as any;
    expect(jwks['x-wire']).toBe('document');
    expect(jwks.responses['200'].content['application/json'].schema).not.toEqual({ $ref: '#/components/schemas/Success' });
    expect(Object.keys((doc.paths['/.well-known/acme-challenge/{token}']!.get as any).responses['200'].content)).toEqual(['text/plain']);
    expect((doc.paths['/api/v1/secrets']!.get as any).responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/Success',
    });
  });
});

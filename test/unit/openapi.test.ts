import { describe, expect, it } from 'vitest';
import * as z from 'zod/v4';
import { ROUTES } from '../../lib/routes.js';
import { buildOpenApi, jsonSchema, openApiPath } from '../../scripts/openapi.js';
import { scaled } from '../helpers/timeouts.js';

describe('OpenAPI document', () => {
  it(
    "has an operation for every route (the contract's 322 and those beyond it) with their auth, scopes and the secrets body schema",
    async () => {
      const doc = await buildOpenApi();
      const ops = Object.values(doc.paths).flatMap((p) => Object.values(p));
      expect(ops).toHaveLength(ROUTES.length);
      const create = doc.paths['/api/v1/secrets']!.post as any;
      expect(create['x-scopes']).toEqual(['secrets:write']);
      expect(create.requestBody.content['application/json'].schema.required).toEqual(['name', 'data']);
      expect(create.requestBody.content['application/json'].schema.additionalProperties).toBe(false);
      const list = doc.paths['/api/v1/secrets']!.get as any;
      expect(list.parameters.find((p: any) => p.name === 'limit').schema).toMatchObject({ minimum: 1, maximum: 1000, default: 100 });
      expect((doc.paths['/health']!.get as any).security).toEqual([]);
      // the first build of the document imports every handler module: minutes on a loaded 2-core machine
    },
    scaled(240_000),
  );
});

describe('OpenAPI request bodies', () => {
  it('every create and update operation of a built route describes its body (one that takes no fields: none or `{}`)', async () => {
    const doc = await buildOpenApi();
    const { ROUTES } = await import('../../lib/routes.js');
    const empty = ROUTES.filter((r) => r.handler && (r.method === 'POST' || r.method === 'PUT' || r.method === 'PATCH'))
      .filter((r) => {
        const s = (doc.paths[openApiPath(r)] as any)[r.method.toLowerCase()].requestBody?.content?.['application/json']?.schema;
        return !s || Object.keys(s).filter((k) => k !== '$schema').length === 0;
      })
      .map((r) => r.key);
    expect(empty).toEqual([]);
    // a route without fields says so: an optional body of no properties, so a body with any is refused by both
    const logout = (doc.paths['/api/v1/auth/oidc/logout']!.post as any).requestBody;
    expect(logout.required).not.toBe(true);
    expect(logout.content['application/json'].schema).toMatchObject({ type: 'object', additionalProperties: false });
    expect(Object.keys(logout.content['application/json'].schema.properties ?? {})).toEqual([]);
    const wifi = (doc.paths['/api/v1/wifi-credentials']!.post as any).requestBody.content['application/json'].schema;
    expect(wifi.required).toEqual(expect.arrayContaining(['name', 'ssid']));
  });
});

describe('OpenAPI patterns', () => {
  it('a regex flag the document cannot carry (i, m, s) stops the build, naming the pattern; u and flagless patterns pass as written', () => {
    expect(() => jsonSchema(z.strictObject({ q: z.string().regex(/^select\b/i) }))).toThrow(
      '/^select\\b/i: the OpenAPI document cannot carry the regex flags "i"',
    );
    expect(() => jsonSchema(z.string().regex(/^a.b$/s), 'output')).toThrow(/flags "s"/);
    expect(jsonSchema(z.string().regex(/^\p{L}+$/u))).toMatchObject({ pattern: '^\\p{L}+$' });
    expect(jsonSchema(z.string().regex(/^[Ss]elect$/))).toMatchObject({ pattern: '^[Ss]elect$' });
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
    // RFC 7517 §8.5.1: a JWK Set is served as what it is
    expect(Object.keys(jwks.responses['200'].content)).toEqual(['application/jwk-set+json']);
    expect(jwks.responses['200'].content['application/jwk-set+json'].schema).not.toEqual({ $ref: '#/components/schemas/Success' });
    expect(Object.keys((doc.paths['/.well-known/acme-challenge/{token}']!.get as any).responses['200'].content)).toEqual(['text/plain']);
    // the envelope wire: {success: true, data: <the handler's declared schema>}
    const list = (doc.paths['/api/v1/secrets']!.get as any).responses['200'].content['application/json'].schema;
    expect(list.properties.success).toEqual({ const: true });
    expect(list.required).toEqual(['success', 'data']);
    expect(list.properties.data.required).toContain('secrets');
  });
});

describe('OpenAPI responses, headers, security and servers', () => {
  it('every operation has a summary, a description, its family tag (declared with a description) and a 2xx plus its error statuses', async () => {
    const doc = await buildOpenApi();
    const tags = new Map(doc.tags.map((t) => [t.name, t.description]));
    const { ROUTES } = await import('../../lib/routes.js');
    for (const route of ROUTES) {
      const op = (doc.paths[openApiPath(route)] as any)[route.method.toLowerCase()];
      expect(op.summary, route.key).toMatch(/\S/);
      expect(op.description, route.key).toMatch(/\S/);
      expect(tags.get(op.tags[0]), route.key).toMatch(/\S/);
      expect(
        Object.keys(op.responses).some((s) => s.startsWith('2')),
        route.key,
      ).toBe(true);
      expect(op.responses['500']['x-error-codes'], route.key).toContain('internal_error');
    }
  });

  it('derives the error statuses from the route: auth, path parameters, body, If-Match, Idempotency-Key, rate limits', async () => {
    const doc = await buildOpenApi();
    const put = (doc.paths['/api/v1/secrets/{name}'] as any).put;
    const codes = (status: number) => put.responses[String(status)]['x-error-codes'];
    expect(codes(401)).toEqual(expect.arrayContaining(['unauthorized', 'credentials_expired']));
    expect(codes(403)).toEqual(expect.arrayContaining(['insufficient_scope', 'tenant_suspended']));
    expect(codes(404)).toContain('not_found');
    expect(codes(400)).toEqual(expect.arrayContaining(['validation_failed', 'invalid_json', 'invalid_idempotency_key']));
    expect(codes(409)).toEqual(expect.arrayContaining(['stale_etag', 'idempotency_key_reused']));
    expect(codes(412)).toEqual(['precondition_failed']);
    expect(codes(413)).toEqual(['payload_too_large']);
    expect(codes(415)).toEqual(['unsupported_media_type']);
    expect(codes(428)).toEqual(['precondition_required']);
    expect(Object.keys(put.responses['429'].headers)).toEqual(
      expect.arrayContaining(['Retry-After', 'RateLimit', 'RateLimit-Policy', 'X-Request-Id']),
    );
    // each error status's body only admits its own codes
    expect(put.responses['412'].content['application/json'].schema).toEqual({
      allOf: [{ $ref: '#/components/schemas/Error' }],
      properties: { code: { enum: ['precondition_failed'] } },
    });
    const params = put.parameters.map((p: any) => p.$ref ?? p.name);
    // an update must be conditional (RFC 6585 §3): its If-Match is required; a delete's stays optional
    expect(params).toEqual(['name', '#/components/parameters/IfMatchRequired', '#/components/parameters/IdempotencyKey']);
    expect(doc.components.parameters.IfMatchRequired).toMatchObject({ name: 'If-Match', in: 'header', required: true });
    const del = (doc.paths['/api/v1/secrets/{name}'] as any).delete;
    expect(del.parameters.map((p: any) => p.$ref ?? p.name)).toContain('#/components/parameters/IfMatch');
    expect(put.security).toEqual([{ bearerAuth: ['secrets:write'] }]);
    // public routes: no credential, no 401/403/429
    const health = (doc.paths['/health'] as any).get;
    expect(health.security).toEqual([]);
    expect(Object.keys(health.responses).filter((s) => s.startsWith('4'))).toEqual([]);
    // device routes: the signature scheme and its headers
    const { ROUTES } = await import('../../lib/routes.js');
    const device = ROUTES.find((r) => r.auth === 'device')!;
    const op = (doc.paths[device.path] as any)[device.method.toLowerCase()];
    expect(op.security).toEqual([{ deviceSignature: [] }]);
    expect(op.parameters.map((p: any) => p.$ref)).toEqual(
      expect.arrayContaining([
        '#/components/parameters/Signature',
        '#/components/parameters/SignatureInput',
        '#/components/parameters/ContentDigest',
      ]),
    );
    expect(op.responses['401']['x-error-codes']).toContain('invalid_signature');
    // the temporary access token is the path's credential
    const temp = (doc.paths['/api/v1/t/{token}'] as any).get;
    expect(temp.parameters[0].description).toMatch(/temporary access token/);
  });

  it('servers: a {scheme}://{host} server with variables by default, or the given URLs', async () => {
    const saved = process.env.OPENAPI_SERVER_URL;
    delete process.env.OPENAPI_SERVER_URL;
    try {
      const doc = await buildOpenApi();
      expect(doc.servers).toEqual([
        expect.objectContaining({ url: '{scheme}://{host}', variables: expect.objectContaining({ host: expect.anything() }) }),
      ]);
      expect((await buildOpenApi({ servers: ['https://api.example.test'] })).servers).toEqual([{ url: 'https://api.example.test' }]);
      process.env.OPENAPI_SERVER_URL = 'https://a.example.test,https://b.example.test';
      expect((await buildOpenApi()).servers.map((s) => s.url)).toEqual(['https://a.example.test', 'https://b.example.test']);
    } finally {
      if (saved === undefined) delete process.env.OPENAPI_SERVER_URL;
      else process.env.OPENAPI_SERVER_URL = saved;
    }
  });

  it('Error.details items are typed (path, message)', async () => {
    const doc = await buildOpenApi();
    expect(doc.components.schemas.Error.properties.details.items).toMatchObject({ type: 'object', required: ['path', 'message'] });
  });
});

describe('the cross-field rules of the zod schemas are in the description (one source: lib/schemas.ts atLeastOneField, exactlyOneOf)', () => {
  it(
    'exactly one of → oneOf of required; a non-empty update → minProperties: 1; the document refuses what the server refuses',
    async () => {
      const { Ajv2020 } = await import('ajv/dist/2020.js');
      const doc = (await buildOpenApi()) as any;
      const body = (method: string, path: string) => doc.paths[path][method].requestBody.content['application/json'].schema;
      // the cross-field keywords alone: string formats are the contract checks' (test/helpers/request-validator.ts)
      const ajv = new Ajv2020({ strict: false, validateFormats: false });
      const valid = (schema: object, value: unknown) => ajv.validate(schema, value);

      for (const path of ['/api/v1/secrets/{name}', '/api/v1/containers/{id}', '/api/v1/crypto-wallets/{id}', '/api/v1/jks-keystores/{id}']) {
        expect(body('put', path).minProperties, path).toBe(1);
        expect(valid(body('put', path), {}), path).toBe(false);
      }
      const exactlyOne: [string, string, string, Record<string, unknown>][] = [
        ['/api/v1/escrow/split', 'secret', 'secret_base64', { shares: 3, threshold: 2 }],
        ['/api/v1/transform/encode', 'input', 'input_base64', { format: 'base64' }],
        ['/api/v1/skey-otps', 'passphrase', 'initial_otp', { name: 'x' }],
        ['/api/v1/variables/resolve', 'names', 'template', {}],
      ];
      for (const [path, a, b] of exactlyOne) {
        const schema = body('post', path);
        expect(schema.oneOf, path).toEqual([{ required: [a] }, { required: [b] }]);
      }
      // the escrow sample that failed behind a validating proxy: both, or neither, is refused by the document too
      const split = body('post', '/api/v1/escrow/split');
      expect(valid(split, { secret: 's', shares: 3, threshold: 2 })).toBe(true);
      expect(valid(split, { secret: 's', secret_base64: 'cw==', shares: 3, threshold: 2 })).toBe(false);
      expect(valid(split, { shares: 3, threshold: 2 })).toBe(false);
    },
    scaled(600_000),
  );
});

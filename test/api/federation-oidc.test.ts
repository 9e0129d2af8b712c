import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import Provider from 'oidc-provider';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { api, canary, errorCode, newAccount, unique, type TestAccount } from '../helpers/api.js';
import { useRuntimeConfig } from '../helpers/in-process.js';
import { findLeaks } from '../helpers/leaks.js';
import { allowLoopback } from './webhooks.helpers.js';

/**
 * The OIDC federation stores: trusted JWK sets (inline or by URL through the SSRF guard),
 * OIDC clients of the service's authorization server (secret shown once, stored hashed,
 * rotation with a grace period), and stored tokens verified against the issuer's set. A real
 * authorization server (oidc-provider, in this process) issues the token that must verify.
 */
let acct: TestAccount;
let other: TestAccount;
let readKey: string;
let writeKey: string;
let wrongKey: string;
let provider: { issuer: string; jwksUri: string; close(): Promise<void>; token(): Promise<string> };
const MISSING = '00000000-0000-7000-8000-000000000000';
/** Every client secret and raw token the service saw: none may reach the table or the log in plaintext. */
const secrets: string[] = [];
let opSetId = '';
/** A JWT whose signature segment is a canary: its raw text carries the marker the suite's leak scan looks for. */
const canaryJwt = (claims: Record<string, unknown>) =>
  `${Buffer.from(JSON.stringify({ alg: 'ES256', kid: 'nope' })).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${canary('jwt')}`;

async function startProvider(): Promise<typeof provider> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signing = { ...(await exportJWK(privateKey)), kid: unique('op'), alg: 'RS256', use: 'sig' };
  const clientSecret = canary('op-client-secret');
  let issuer = '';
  const server: Server = createServer((req, res) => oidc.callback()(req, res));
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const port = (server.address() as { port: number }).port;
  issuer = `http://127.0.0.1:${port}`;
  const audience = 'https://api.example.test';
  const oidc = new Provider(issuer, {
    jwks: { keys: [signing] },
    clients: [{ client_id: 'workload', client_secret: clientSecret, grant_types: ['client_credentials'], redirect_uris: [], response_types: [] }],
    features: {
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => audience,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({ scope: 'read', audience, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } }),
      },
    },
  });
  return {
    issuer,
    jwksUri: `${issuer}/jwks`,
    async token() {
      const res = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`workload:${clientSecret}`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'read', resource: audience }).toString(),
      });
      const body = (await res.json()) as { access_token?: string };
      if (!body.access_token) throw new Error(`oidc-provider issued no token: ${JSON.stringify(body)}`);
      return body.access_token;
    },
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

const rsaPublic = async (kid: string) => ({ ...(await exportJWK((await generateKeyPair('RS256', { extractable: true })).publicKey)), kid, alg: 'RS256', use: 'sig' });

beforeAll(async () => {
  useRuntimeConfig();
  [acct, other] = await Promise.all([newAccount('oidc'), newAccount('oidc-other')]);
  [readKey, writeKey, wrongKey] = await Promise.all([
    acct.key(['oidc:read']),
    acct.key(['oidc:read', 'oidc:write']),
    acct.key(['saml:read', 'saml:write']),
  ]);
  provider = await startProvider();
});

afterAll(async () => {
  await provider?.close();
});

describe('JWK sets', () => {
  it('create inline, get, list (kids, no keys), update, publish in .well-known, delete', async () => {
    const k1 = await rsaPublic('k1');
    const { publicKey: ec } = await generateKeyPair('ES256', { extractable: true });
    const k2 = { ...(await exportJWK(ec)), kid: 'k2' };
    const made = await api('POST', '/api/v1/oidc/jwks', {
      key: writeKey,
      body: { name: 'partner', issuer: 'https://issuer.partner.test', jwks: { keys: [k1, k2] }, publish: true },
    });
    expect(made.status, made.text).toBe(201);
    const set = made.body.data.jwks;
    expect(set).toMatchObject({ name: 'partner', source: 'inline', kids: ['k1', 'k2'], publish: true, version: 1 });
    expect(set.keys.map((k: { kid: string }) => k.kid)).toEqual(['k1', 'k2']);

    const got = await api('GET', `/api/v1/oidc/jwks/${set.id}`, { key: readKey });
    expect(got.status).toBe(200);
    expect(got.body.data.jwks.keys[0].n).toBe(k1.n);

    const list = await api('GET', '/api/v1/oidc/jwks', { key: readKey });
    expect(list.status).toBe(200);
    const listed = list.body.data.jwks.find((s: { id: string }) => s.id === set.id);
    expect(listed).toMatchObject({ kids: ['k1', 'k2'] });
    expect(listed.keys).toBeUndefined();

    const wk = await api('GET', '/api/v1/oidc/jwks/.well-known', { key: readKey });
    expect(wk.status).toBe(200);
    expect(wk.headers.get('content-type')).toContain('application/jwk-set+json');
    expect(JSON.parse(wk.text)).toEqual({ keys: set.keys });

    const upd = await api('PUT', `/api/v1/oidc/jwks/${set.id}`, { key: writeKey, body: { jwks: { keys: [k1] }, publish: false } });
    expect(upd.status, upd.text).toBe(200);
    expect(upd.body.data.jwks).toMatchObject({ kids: ['k1'], publish: false, version: 2 });
    expect(JSON.parse((await api('GET', '/api/v1/oidc/jwks/.well-known', { key: readKey })).text)).toEqual({ keys: [] });

    // an issuer names one set; renaming it frees the old issuer
    const twin = await api('POST', '/api/v1/oidc/jwks', { key: writeKey, body: { name: 'twin', issuer: 'https://issuer.partner.test', jwks: { keys: [k1] } } });
    expect(twin.status).toBe(409);
    const moved = await api('PUT', `/api/v1/oidc/jwks/${set.id}`, { key: writeKey, body: { issuer: 'https://issuer2.partner.test' } });
    expect(moved.status, moved.text).toBe(200);
    const freed = await api('POST', '/api/v1/oidc/jwks', { key: writeKey, body: { name: 'twin', issuer: 'https://issuer.partner.test', jwks: { keys: [k1] } } });
    expect(freed.status, freed.text).toBe(201);
    expect((await api('DELETE', `/api/v1/oidc/jwks/${freed.body.data.jwks.id}`, { key: writeKey })).status).toBe(200);

    const del = await api('DELETE', `/api/v1/oidc/jwks/${set.id}`, { key: writeKey });
    expect(del.status).toBe(200);
    expect((await api('GET', `/api/v1/oidc/jwks/${set.id}`, { key: readKey })).status).toBe(404);
  });

  it('refuses private members, symmetric keys, weak RSA, bad curves, duplicate or missing kids (400)', async () => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const priv = { ...(await exportJWK(privateKey)), kid: 'p' };
    const small = { ...generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'jwk' }), kid: 's' };
    const k = await rsaPublic('dup');
    const cases: [unknown, string][] = [
      [{ keys: [priv] }, 'body.jwks.keys.0.d'],
      [{ keys: [{ kty: 'oct', k: 'c2VjcmV0', kid: 'o' }] }, 'body.jwks.keys.0.k'],
      [{ keys: [{ kty: 'oct', kid: 'o' }] }, 'body.jwks.keys.0.kty'],
      [{ keys: [small] }, 'body.jwks.keys.0.n'],
      [{ keys: [{ ...k, alg: 'HS256' }] }, 'body.jwks.keys.0.alg'],
      [{ keys: [{ kty: 'EC', crv: 'P-256', x: 'AAAA', y: 'AAAA', kid: 'bad' }] }, 'body.jwks.keys.0'],
      [{ keys: [k, k] }, 'body.jwks.keys.1.kid'],
      [{ keys: [k, { ...(await rsaPublic('x')), kid: undefined }] }, 'body.jwks.keys.1.kid'],
      [{ keys: [] }, 'body.jwks.keys'],
    ];
    for (const [jwks, path] of cases) {
      const res = await api('POST', '/api/v1/oidc/jwks', { key: writeKey, body: { name: 'bad', jwks } });
      expect(res.status, JSON.stringify(jwks).slice(0, 80)).toBe(400);
      expect(res.body.details.map((d: { path: string }) => d.path)).toContain(path);
    }
    const neither = await api('POST', '/api/v1/oidc/jwks', { key: writeKey, body: { name: 'x' } });
    expect(errorCode(neither)).toBe('validation_failed');
    expect(errorCode(await api('PUT', `/api/v1/oidc/jwks/${MISSING}`, { key: writeKey, body: {} }))).toBe('validation_failed');
    expect((await api('GET', '/api/v1/oidc/jwks/not-a-uuid', { key: readKey })).status).toBe(400);
  });

  it('jwks_uri: refused destinations (400) until the account allows loopback; fetched with its caching headers', async () => {
    const refused = await api('POST', '/api/v1/oidc/jwks', { key: writeKey, body: { name: 'meta', jwks_uri: 'http://169.254.169.254/jwks' } });
    const who = (uri: string, res: { status: number; body: { error?: string } }) =>
      `POST /api/v1/oidc/jwks as a key of the account's writer (loopback allowance off), jwks_uri ${uri}: got ${res.status} ${res.body?.error ?? ''}`;
    expect(refused.status, who('http://169.254.169.254/jwks', refused)).toBe(400);
    expect(errorCode(refused), who('http://169.254.169.254/jwks', refused)).toBe('jwks_fetch_failed');
    const loop = await api('POST', '/api/v1/oidc/jwks', { key: writeKey, body: { name: 'loop', jwks_uri: provider.jwksUri } });
    expect(errorCode(loop), who(provider.jwksUri, loop)).toBe('jwks_fetch_failed');

    const kp1 = await generateKeyPair('ES256', { extractable: true });
    const kp2 = await generateKeyPair('ES256', { extractable: true });
    const jwk1 = { ...(await exportJWK(kp1.publicKey)), kid: 'served-1' };
    const jwk2 = { ...(await exportJWK(kp2.publicKey)), kid: 'served-2' };
    let current = { etag: '"v1"', keys: [jwk1] };
    const seen: (string | undefined)[] = [];
    const server = createServer((req, res) => {
      seen.push(req.headers['if-none-match'] as string | undefined);
      if (req.url === '/redirect') res.writeHead(302, { location: 'http://169.254.169.254/' }).end();
      else if (req.url === '/error') res.writeHead(500).end();
      else if (req.url === '/text') res.writeHead(200, { 'content-type': 'text/plain' }).end('hello');
      else if (req.url === '/big') res.writeHead(200).end(JSON.stringify({ keys: [], pad: 'x'.repeat(300 * 1024) }));
      else if (req.url === '/private') res.writeHead(200).end(JSON.stringify({ keys: [{ kty: 'oct', k: 'c2VjcmV0' }] }));
      else if (req.headers['if-none-match'] === current.etag) res.writeHead(304, { etag: current.etag, 'cache-control': 'max-age=600' }).end();
      else res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=600', etag: current.etag }).end(JSON.stringify({ keys: current.keys }));
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const issuer = `${base}/issuer`;
    try {
      await allowLoopback(acct);
      const made = await api('POST', '/api/v1/oidc/jwks', { key: writeKey, body: { name: 'by-url', issuer, jwks_uri: `${base}/jwks.json` } });
      expect(made.status, made.text).toBe(201);
      const set = made.body.data.jwks;
      expect(set).toMatchObject({ source: 'url', kids: ['served-1'], etag: '"v1"' });
      const ttl = Date.parse(set.cache_until) - Date.parse(set.fetched_at);
      expect(ttl).toBeGreaterThan(590_000);
      expect(ttl).toBeLessThan(610_000);
      expect(seen).toEqual([undefined]);

      // refresh now: a conditional GET, 304 keeps the keys
      const same = await api('PUT', `/api/v1/oidc/jwks/${set.id}`, { key: writeKey, body: { refresh: true } });
      expect(same.status, same.text).toBe(200);
      expect(same.body.data.jwks.kids).toEqual(['served-1']);
      expect(seen).toEqual([undefined, '"v1"']);

      // within its cache lifetime a token verification uses the stored keys (no fetch) ...
      current = { etag: '"v2"', keys: [jwk2] };
      const signed2 = await new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'served-2' }).setIssuer(issuer).setExpirationTime('1h').sign(kp2.privateKey);
      const before = await api('POST', '/api/v1/oidc/tokens', { key: writeKey, body: { token: signed2 } });
      expect(before.body.data.token.verification).toBe('invalid');
      expect(seen).toHaveLength(2);
      // ... and past it (the item's cache_until moved back) fetches again, conditionally
      const { db, tableName } = await import('../../lib/store/client.js');
      const { UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
      await db().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: { pk: `T#${acct.tenantId}`, sk: `JWKS#${set.id}` },
          UpdateExpression: 'SET cache_until = :past',
          ExpressionAttributeValues: { ':past': '2000-01-01T00:00:00.000Z' },
        }),
      );
      const after = await api('POST', '/api/v1/oidc/tokens', { key: writeKey, body: { token: signed2 } });
      expect(after.body.data.token).toMatchObject({ verification: 'valid', jwks_id: set.id });
      expect(seen).toEqual([undefined, '"v1"', '"v1"']);
      const refreshed = await api('GET', `/api/v1/oidc/jwks/${set.id}`, { key: readKey });
      expect(refreshed.body.data.jwks).toMatchObject({ kids: ['served-2'], etag: '"v2"', fetch_error: null });

      const redirect = await api('POST', '/api/v1/oidc/jwks', { key: writeKey, body: { name: 'r', jwks_uri: `${base}/redirect` } });
      expect(redirect.status).toBe(400);
      expect(redirect.body.error).toContain('redirect not followed');
      for (const [path, why] of [
        ['/error', 'HTTP 500'],
        ['/text', 'did not answer JSON'],
        ['/big', 'exceeds'],
        ['/private', 'invalid JWK set'],
      ] as const) {
        const res = await api('POST', '/api/v1/oidc/jwks', { key: writeKey, body: { name: 'r', jwks_uri: `${base}${path}` } });
        expect(res.status, path).toBe(400);
        expect(res.body.error, path).toContain(why);
      }
      const nohost = await api('POST', '/api/v1/oidc/jwks', { key: writeKey, body: { name: 'r', jwks_uri: 'https://no-such-host.invalid/jwks' } });
      expect(errorCode(nohost)).toBe('jwks_fetch_failed');
      const inline = await api('POST', '/api/v1/oidc/jwks', { key: writeKey, body: { name: 'inline', jwks: { keys: [jwk1] } } });
      expect(errorCode(await api('PUT', `/api/v1/oidc/jwks/${inline.body.data.jwks.id}`, { key: writeKey, body: { refresh: true } }))).toBe('bad_request');
      // an inline set moved to a URL, and back
      const toUrl = await api('PUT', `/api/v1/oidc/jwks/${inline.body.data.jwks.id}`, { key: writeKey, body: { jwks_uri: `${base}/jwks.json` } });
      expect(toUrl.body.data.jwks).toMatchObject({ source: 'url', kids: ['served-2'] });
      const back = await api('PUT', `/api/v1/oidc/jwks/${inline.body.data.jwks.id}`, { key: writeKey, body: { jwks: { keys: [jwk1] } } });
      expect(back.body.data.jwks).toMatchObject({ source: 'inline', jwks_uri: null, etag: null, kids: ['served-1'] });
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('401 without a key, 403 without the scope, 404 for another account', async () => {
    const made = await api('POST', '/api/v1/oidc/jwks', { key: writeKey, body: { name: 'scoped', jwks: { keys: [await rsaPublic('a')] } } });
    const id = made.body.data.jwks.id;
    expect((await api('GET', `/api/v1/oidc/jwks/${id}`)).status).toBe(401);
    expect((await api('GET', '/api/v1/oidc/jwks/.well-known')).status).toBe(401);
    expect(errorCode(await api('POST', '/api/v1/oidc/jwks', { key: readKey, body: { name: 'x', jwks: { keys: [] } } }))).toBe('insufficient_scope');
    expect(errorCode(await api('GET', '/api/v1/oidc/jwks/.well-known', { key: wrongKey }))).toBe('insufficient_scope');
    for (const [m, body] of [
      ['GET', undefined],
      ['PUT', { name: 'theirs' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await api(m, `/api/v1/oidc/jwks/${id}`, { key: other.adminKey, body });
      expect(res.status, m).toBe(404);
    }
    expect((await api('GET', `/api/v1/oidc/jwks/${id}`, { key: readKey })).status).toBe(200);
  });
});

describe('OIDC clients', () => {
  it('create shows the secret once; get/list never; update; rotate keeps the old one for the grace period; delete', async () => {
    const made = await api('POST', '/api/v1/oidc/clients', {
      key: writeKey,
      body: {
        name: 'cli',
        redirect_uris: ['https://app.example.test/cb', 'http://127.0.0.1:8765/cb'],
        grant_types: ['authorization_code', 'refresh_token'],
        scopes: ['openid', 'secrets:read'],
      },
    });
    expect(made.status, made.text).toBe(201);
    const { client, client_secret: secret } = made.body.data;
    secrets.push(secret);
    expect(secret).toMatch(/^ocs_[A-Za-z0-9_-]{43}$/);
    expect(client).toMatchObject({ client_id: `${acct.tenantId}.${client.id}`, token_endpoint_auth_method: 'client_secret_basic', secret_prefix: secret.slice(0, 8) });
    expect(client.secret_hash).toBeUndefined();

    const got = await api('GET', `/api/v1/oidc/clients/${client.id}`, { key: readKey });
    expect(got.status).toBe(200);
    expect(got.text).not.toContain(secret);
    expect(got.body.data.client.redirect_uris).toEqual(['https://app.example.test/cb', 'http://127.0.0.1:8765/cb']);
    const list = await api('GET', '/api/v1/oidc/clients', { key: readKey });
    expect(list.status).toBe(200);
    expect(list.body.data.clients.map((c: { id: string }) => c.id)).toContain(client.id);
    expect(list.text).not.toContain('secret_hash');

    const upd = await api('PUT', `/api/v1/oidc/clients/${client.id}`, { key: writeKey, body: { scopes: ['openid'], name: 'cli2' } });
    expect(upd.status, upd.text).toBe(200);
    expect(upd.body.data.client).toMatchObject({ name: 'cli2', scopes: ['openid'], version: 2 });
    expect(upd.body.data.client_secret).toBeUndefined();

    const rot = await api('POST', `/api/v1/oidc/clients/${client.id}/rotate-secret`, { key: writeKey, body: { grace_seconds: 3600 } });
    expect(rot.status, rot.text).toBe(200);
    expect(rot.body.data.client_secret).not.toBe(secret);
    secrets.push(rot.body.data.client_secret);
    const until = Date.parse(rot.body.data.previous_secret_valid_until);
    expect(until - Date.parse(rot.body.data.client.secret_rotated_at)).toBe(3_600_000);
    expect(rot.body.data.client.previous_secret_expires_at).toBe(rot.body.data.previous_secret_valid_until);
    const now = await api('POST', `/api/v1/oidc/clients/${client.id}/rotate-secret`, { key: writeKey, body: { grace_seconds: 0 } });
    expect(now.body.data.previous_secret_valid_until).toBeNull();
    const dflt = await api('POST', `/api/v1/oidc/clients/${client.id}/rotate-secret`, { key: writeKey });
    expect(dflt.status).toBe(200);
    expect(Date.parse(dflt.body.data.previous_secret_valid_until) - Date.parse(dflt.body.data.client.secret_rotated_at)).toBe(86_400_000);

    expect((await api('DELETE', `/api/v1/oidc/clients/${client.id}`, { key: writeKey })).status).toBe(200);
    expect((await api('GET', `/api/v1/oidc/clients/${client.id}`, { key: readKey })).status).toBe(404);
  });

  it('private_key_jwt names a JWK set of the account and has no secret', async () => {
    const set = await api('POST', '/api/v1/oidc/jwks', { key: writeKey, body: { name: 'client-keys', jwks: { keys: [await rsaPublic('c1')] } } });
    const foreign = await api('POST', '/api/v1/oidc/jwks', { key: other.adminKey, body: { name: 'theirs', jwks: { keys: [await rsaPublic('t1')] } } });
    const body = { name: 'svc', grant_types: ['client_credentials'], token_endpoint_auth_method: 'private_key_jwt' };
    const made = await api('POST', '/api/v1/oidc/clients', { key: writeKey, body: { ...body, jwks_id: set.body.data.jwks.id } });
    expect(made.status, made.text).toBe(201);
    expect(made.body.data.client_secret).toBeNull();
    expect(made.body.data.client.jwks_id).toBe(set.body.data.jwks.id);
    const rot = await api('POST', `/api/v1/oidc/clients/${made.body.data.client.id}/rotate-secret`, { key: writeKey, body: {} });
    expect(rot.status).toBe(400);
    const theirs = await api('POST', '/api/v1/oidc/clients', { key: writeKey, body: { ...body, jwks_id: foreign.body.data.jwks.id } });
    expect(theirs.status).toBe(400);
    expect(theirs.body.details[0].path).toBe('body.jwks_id');
    // switching to a secret method issues a first secret, once
    const sw = await api('PUT', `/api/v1/oidc/clients/${made.body.data.client.id}`, { key: writeKey, body: { token_endpoint_auth_method: 'client_secret_post' } });
    expect(sw.status, sw.text).toBe(200);
    expect(sw.body.data.client_secret).toMatch(/^ocs_/);
    expect(sw.body.data.client.jwks_id).toBeNull();
  });

  it('400 for bad redirect URIs, grant types, scopes and missing fields', async () => {
    const base = { name: 'x', grant_types: ['authorization_code'], redirect_uris: ['https://ok.example.test/cb'] };
    const bad: [Record<string, unknown>, string][] = [
      [{ ...base, redirect_uris: ['http://app.example.test/cb'] }, 'body.redirect_uris.0'],
      [{ ...base, redirect_uris: ['https://app.example.test/cb#frag'] }, 'body.redirect_uris.0'],
      [{ ...base, redirect_uris: ['/relative'] }, 'body.redirect_uris.0'],
      [{ ...base, redirect_uris: [] }, 'body.redirect_uris'],
      [{ ...base, grant_types: ['password'] }, 'body.grant_types.0'],
      [{ ...base, scopes: ['has space'] }, 'body.scopes.0'],
      [{ ...base, token_endpoint_auth_method: 'private_key_jwt' }, 'body.jwks_id'],
      [{ grant_types: ['client_credentials'] }, 'body.name'],
    ];
    for (const [body, path] of bad) {
      const res = await api('POST', '/api/v1/oidc/clients', { key: writeKey, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.details.map((d: { path: string }) => d.path)).toContain(path);
    }
    const made = await api('POST', '/api/v1/oidc/clients', { key: writeKey, body: base });
    const id = made.body.data.client.id;
    expect((await api('PUT', `/api/v1/oidc/clients/${id}`, { key: writeKey, body: { redirect_uris: [] } })).status).toBe(400);
    expect((await api('POST', `/api/v1/oidc/clients/${id}/rotate-secret`, { key: writeKey, body: { grace_seconds: -1 } })).status).toBe(400);
  });

  it('401, 403 without oidc:write, 404 for another account on every client route', async () => {
    const made = await api('POST', '/api/v1/oidc/clients', { key: writeKey, body: { name: 'c', grant_types: ['client_credentials'] } });
    const id = made.body.data.client.id;
    expect((await api('GET', '/api/v1/oidc/clients')).status).toBe(401);
    expect(errorCode(await api('POST', '/api/v1/oidc/clients', { key: readKey, body: { name: 'c', grant_types: ['client_credentials'] } }))).toBe(
      'insufficient_scope',
    );
    expect(errorCode(await api('POST', `/api/v1/oidc/clients/${id}/rotate-secret`, { key: readKey, body: {} }))).toBe('insufficient_scope');
    expect(errorCode(await api('GET', `/api/v1/oidc/clients/${id}`, { key: wrongKey }))).toBe('insufficient_scope');
    for (const [m, path, body] of [
      ['GET', '', undefined],
      ['PUT', '', { name: 'theirs' }],
      ['POST', '/rotate-secret', {}],
      ['DELETE', '', undefined],
    ] as const) {
      expect((await api(m, `/api/v1/oidc/clients/${id}${path}`, { key: other.adminKey, body })).status, `${m} ${path}`).toBe(404);
    }
    expect((await api('GET', `/api/v1/oidc/clients/${id}`, { key: readKey })).status).toBe(200);
  });
});

describe('OIDC tokens', () => {
  it('a token issued by oidc-provider verifies against its JWKS stored through the API; one byte changed is invalid', async () => {
    const jwks = (await (await fetch(provider.jwksUri)).json()) as { keys: unknown[] };
    const set = await api('POST', '/api/v1/oidc/jwks', { key: writeKey, body: { name: 'op', issuer: provider.issuer, jwks } });
    expect(set.status, set.text).toBe(201);
    opSetId = set.body.data.jwks.id;
    const token = await provider.token();
    secrets.push(token);

    const stored = await api('POST', '/api/v1/oidc/tokens', { key: writeKey, body: { token, description: 'workload' } });
    expect(stored.status, stored.text).toBe(201);
    expect(stored.body.data.token).toMatchObject({
      iss: provider.issuer,
      aud: ['https://api.example.test'],
      verification: 'valid',
      jwks_id: set.body.data.jwks.id,
      status: 'active',
      alg: 'RS256',
    });
    expect(stored.text).not.toContain(token);
    expect(stored.body.data.token.jti).toEqual(expect.any(String));
    expect(Date.parse(stored.body.data.token.exp)).toBeGreaterThan(Date.now());

    // one byte of the signature changed (its first character, which carries full bits)
    const [h, p, s] = token.split('.') as [string, string, string];
    const flipped = `${h}.${p}.${s[0] === 'A' ? 'B' : 'A'}${s.slice(1)}`;
    const bad = await api('POST', '/api/v1/oidc/tokens', { key: writeKey, body: { token: flipped } });
    expect(bad.status).toBe(201);
    expect(bad.body.data.token).toMatchObject({ verification: 'invalid', jwks_id: set.body.data.jwks.id });
    expect(bad.body.data.token.verification_error).toContain('ERR_JWS_SIGNATURE_VERIFICATION_FAILED');
    // one byte of the payload changed
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, sub: 'admin' })).toString('base64url')}.${s}`;
    expect((await api('POST', '/api/v1/oidc/tokens', { key: writeKey, body: { token: forged } })).body.data.token.verification).toBe('invalid');

    const one = await api('GET', `/api/v1/oidc/tokens/${stored.body.data.token.id}`, { key: readKey });
    expect(one.status).toBe(200);
    expect(one.body.data.raw_token).toBe(token);
    const list = await api('GET', '/api/v1/oidc/tokens', { key: readKey });
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(token);
    expect(list.body.data.tokens.map((t: { id: string }) => t.id)).toContain(stored.body.data.token.id);
  });

  it('the issuer set by URL verifies too, fetched through the guard; one set per issuer', async () => {
    await allowLoopback(acct);
    const clash = await api('POST', '/api/v1/oidc/jwks', { key: writeKey, body: { name: 'op-url', issuer: provider.issuer, jwks_uri: provider.jwksUri } });
    expect(clash.status).toBe(409);
    expect(errorCode(clash)).toBe('already_exists');
    expect((await api('DELETE', `/api/v1/oidc/jwks/${opSetId}`, { key: writeKey })).status).toBe(200);
    const made = await api('POST', '/api/v1/oidc/jwks', { key: writeKey, body: { name: 'op-url', issuer: provider.issuer, jwks_uri: provider.jwksUri } });
    expect(made.status, made.text).toBe(201);
    expect(made.body.data.jwks.source).toBe('url');
    const token = await provider.token();
    secrets.push(token);
    const stored = await api('POST', '/api/v1/oidc/tokens', { key: writeKey, body: { token } });
    expect(stored.body.data.token).toMatchObject({ verification: 'valid', jwks_id: made.body.data.jwks.id });
    // a canary-carrying token claiming the issuer, signed by no key of the set: invalid
    const forged = canaryJwt({ iss: provider.issuer, sub: 'x' });
    secrets.push(forged);
    const bad = await api('POST', '/api/v1/oidc/tokens', { key: writeKey, body: { token: forged } });
    expect(bad.status, bad.text).toBe(201);
    expect(bad.body.data.token.verification).toBe('invalid');
    // a token naming an unknown issuer is recorded as unverified
    const { privateKey } = await generateKeyPair('ES256');
    const raw = canary('tok');
    const unknown = await new SignJWT({ note: raw }).setProtectedHeader({ alg: 'ES256' }).setIssuer('https://unknown.example.test').setSubject('u1').setExpirationTime('1h').sign(privateKey);
    const res = await api('POST', '/api/v1/oidc/tokens', { key: writeKey, body: { token: unknown } });
    expect(res.status).toBe(201);
    expect(res.body.data.token).toMatchObject({ verification: 'unverified', iss: 'https://unknown.example.test', sub: 'u1', jwks_id: null });
  });

  it('revoke is effective on the next read; expired tokens read as expired without their raw form; delete', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const live = await new SignJWT({ c: canary('live-token') }).setProtectedHeader({ alg: 'ES256' }).setIssuer('https://x.test').setExpirationTime('1h').sign(privateKey);
    const past = await new SignJWT({ c: canary('old-token') }).setProtectedHeader({ alg: 'ES256' }).setIssuer('https://x.test').setExpirationTime(Math.floor(Date.now() / 1000) - 60).sign(privateKey);
    secrets.push(live, past);
    const a = (await api('POST', '/api/v1/oidc/tokens', { key: writeKey, body: { token: live } })).body.data.token;
    const b = (await api('POST', '/api/v1/oidc/tokens', { key: writeKey, body: { token: past } })).body.data.token;
    expect(b.status).toBe('expired');
    const expired = await api('GET', `/api/v1/oidc/tokens/${b.id}`, { key: readKey });
    expect(expired.body.data).toMatchObject({ raw_token: null, token: { status: 'expired' } });

    expect((await api('GET', `/api/v1/oidc/tokens/${a.id}`, { key: readKey })).body.data.raw_token).toBe(live);
    const rev = await api('POST', `/api/v1/oidc/tokens/${a.id}/revoke`, { key: writeKey, body: { reason: 'leaked' } });
    expect(rev.status, rev.text).toBe(200);
    expect(rev.body.data.token).toMatchObject({ status: 'revoked', revoke_reason: 'leaked' });
    const after = await api('GET', `/api/v1/oidc/tokens/${a.id}`, { key: readKey });
    expect(after.body.data).toMatchObject({ raw_token: null, token: { status: 'revoked' } });
    const again = await api('POST', `/api/v1/oidc/tokens/${a.id}/revoke`, { key: writeKey });
    expect(again.status).toBe(409);
    expect(errorCode(again)).toBe('already_revoked');

    expect((await api('DELETE', `/api/v1/oidc/tokens/${a.id}`, { key: writeKey })).status).toBe(200);
    expect((await api('GET', `/api/v1/oidc/tokens/${a.id}`, { key: readKey })).status).toBe(404);

    const audit = await api('GET', '/api/v1/audit/logs?limit=500', { key: acct.adminKey });
    expect(audit.status, audit.text).toBe(200);
    const entries = JSON.stringify(audit.body.data);
    for (const action of ['oidc_token.expire', 'oidc_token.revoke', 'oidc_token.delete']) expect(entries).toContain(action);
    expect(entries).not.toContain(live);
  });

  it('400 for what is not a JWT; 401, 403, cross-account 404', async () => {
    for (const token of ['nope', 'a.b', `${Buffer.from('{').toString('base64url')}.e30.sig`]) {
      const res = await api('POST', '/api/v1/oidc/tokens', { key: writeKey, body: { token } });
      expect(res.status, token).toBe(400);
    }
    const { privateKey } = await generateKeyPair('ES256');
    const jwt = await new SignJWT({}).setProtectedHeader({ alg: 'ES256' }).setIssuer('https://x.test').sign(privateKey);
    const id = (await api('POST', '/api/v1/oidc/tokens', { key: writeKey, body: { token: jwt } })).body.data.token.id;
    expect((await api('GET', '/api/v1/oidc/tokens')).status).toBe(401);
    expect(errorCode(await api('POST', '/api/v1/oidc/tokens', { key: readKey, body: { token: jwt } }))).toBe('insufficient_scope');
    expect(errorCode(await api('GET', `/api/v1/oidc/tokens/${id}`, { key: wrongKey }))).toBe('insufficient_scope');
    for (const [m, path] of [
      ['GET', ''],
      ['POST', '/revoke'],
      ['DELETE', ''],
    ] as const) {
      expect((await api(m, `/api/v1/oidc/tokens/${id}${path}`, { key: other.adminKey, body: m === 'POST' ? {} : undefined })).status).toBe(404);
    }
  });
});

describe('secrets at rest', () => {
  it('no client secret or raw token reaches the table or the server log in plaintext', async () => {
    const marked = canaryJwt({ iss: 'https://marked.example.test' });
    const stored = await api('POST', '/api/v1/oidc/tokens', { key: writeKey, body: { token: marked } });
    expect(stored.status).toBe(201);
    expect((await api('GET', `/api/v1/oidc/tokens/${stored.body.data.token.id}`, { key: readKey })).body.data.raw_token).toBe(marked);
    secrets.push(marked);
    expect(secrets.length).toBeGreaterThan(6);
    await new Promise((r) => setTimeout(r, 200));
    const leaks = await findLeaks({
      dynamoEndpoint: inject('dynamoEndpoint'),
      tableName: inject('tableName'),
      logText: readFileSync(inject('logFile'), 'utf8'),
      extra: secrets,
    });
    expect(leaks).toEqual([]);
  });
});

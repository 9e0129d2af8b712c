import { beforeAll, describe, expect, it } from 'vitest';
import { api, canary, errorCode, newAccount, unique, type ApiResponse, type TestAccount } from '../helpers/api.js';
import { createTyped, store, type Store } from './sharing-helpers.js';

let a: TestAccount;
let b: TestAccount;
let s: Store;

beforeAll(async () => {
  [a, b] = await Promise.all([newAccount('look-a'), newAccount('look-b')]);
  s = await store();
});

async function container(key: string) {
  const res = await api('POST', '/api/v1/containers', { key, body: { name: unique('app') } });
  expect(res.status, res.text).toBe(201);
  return res.body.data.container as { id: string; name: string };
}

describe('GET /api/v1/s/{container}/{key}[/{version}]', () => {
  let c: { id: string; name: string };
  let secretName: string;
  const values = [canary('look1'), canary('look2')];
  let pwName: string;
  const password = canary('look-pw');

  beforeAll(async () => {
    c = await container(a.adminKey);
    secretName = unique('db');
    const made = await api('POST', '/api/v1/secrets', {
      key: a.adminKey,
      body: { name: secretName, data: { value: values[0] }, container_id: c.id },
    });
    expect(made.status).toBe(201);
    const headers = { 'if-match': made.headers.get('etag')! };
    expect((await api('PUT', `/api/v1/secrets/${secretName}`, { key: a.adminKey, body: { data: { value: values[1] } }, headers })).status).toBe(200);
    pwName = unique('login');
    await createTyped(s, await s.ctxFor(a.tenantId, a.adminEmail), {
      type: 'password',
      name: pwName,
      meta: { username: 'ops' },
      secret: { password },
      container_id: c.id,
    });
  });

  it('resolves a key in a container (by id or by name) across types, with the current value', async () => {
    const reader = await a.key(['secrets:read']);
    for (const ref of [c.id, c.name]) {
      const res = await api('GET', `/api/v1/s/${ref}/${secretName}`, { key: reader });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toMatchObject({
        container: { id: c.id, name: c.name },
        key: secretName,
        resource: { type: 'secret', name: secretName, version: 2 },
        data: { value: values[1] },
      });
      expect(res.headers.get('etag')).toBe(`"${res.body.data.resource.id}.2"`);
    }
    const pw = await api('GET', `/api/v1/s/${c.name}/${pwName}`, { key: await a.key(['passwords:read']) });
    expect(pw.status).toBe(200);
    expect(pw.body.data).toMatchObject({ resource: { type: 'password', meta: { username: 'ops' } }, data: { password } });
  });

  it("checks the resolved type's read scope in the handler (403)", async () => {
    const res = await api('GET', `/api/v1/s/${c.name}/${pwName}`, { key: await a.key(['secrets:read']) });
    expect(res.status).toBe(403);
    expect(errorCode(res)).toBe('insufficient_scope');
    expect(res.text).not.toContain(password);
    expect((await api('GET', `/api/v1/s/${c.name}/${secretName}`, { key: await a.key(['passwords:read']) })).status).toBe(403);
  });

  it('a version: the current one with the read scope; an older one also needs history:read', async () => {
    const reader = await a.key(['secrets:read']);
    const current = await api('GET', `/api/v1/s/${c.name}/${secretName}/2`, { key: reader });
    expect(current.status).toBe(200);
    expect(current.body.data).toMatchObject({ resource: { version: 2 }, current_version: 2, data: { value: values[1] } });
    const older = await api('GET', `/api/v1/s/${c.name}/${secretName}/1`, { key: reader });
    expect(older.status).toBe(403);
    expect(older.text).not.toContain(values[0]);
    const ok = await api('GET', `/api/v1/s/${c.name}/${secretName}/1`, { key: await a.key(['secrets:read', 'history:read']) });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toMatchObject({ resource: { version: 1 }, current_version: 2, data: { value: values[0] } });
    expect((await api('GET', `/api/v1/s/${c.name}/${secretName}/9`, { key: a.adminKey })).status).toBe(404);
    for (const bad of ['0', 'x', '1e3']) expect((await api('GET', `/api/v1/s/${c.name}/${secretName}/${bad}`, { key: a.adminKey })).status).toBe(400);
  });

  it('404 for an unknown container or key, and across accounts (same body)', async () => {
    const missing = await api('GET', `/api/v1/s/${unique('none')}/${secretName}`, { key: a.adminKey });
    expect(missing.status).toBe(404);
    expect((await api('GET', `/api/v1/s/${c.name}/${unique('nokey')}`, { key: a.adminKey })).status).toBe(404);
    const foreign = await api('GET', `/api/v1/s/${c.id}/${secretName}`, { key: b.adminKey });
    expect(foreign.status).toBe(404);
    expect({ ...foreign.body, request_id: 0 }).toEqual({ ...missing.body, request_id: 0 });
    expect(foreign.text).not.toContain(values[1]);
    expect((await api('GET', `/api/v1/s/${c.name}/${secretName}`, { key: b.adminKey })).status).toBe(404);
    // a secret outside the container is not a key of it
    const loose = unique('loose');
    await api('POST', '/api/v1/secrets', { key: a.adminKey, body: { name: loose, data: { value: canary() } } });
    expect((await api('GET', `/api/v1/s/${c.name}/${loose}`, { key: a.adminKey })).status).toBe(404);
  });

  it('400 on a container reference or key that is too long', async () => {
    expect((await api('GET', `/api/v1/s/${'c'.repeat(129)}/k`, { key: a.adminKey })).status).toBe(400);
    expect((await api('GET', `/api/v1/s/${c.name}/${'k'.repeat(257)}`, { key: a.adminKey })).status).toBe(400);
  });
});

describe('GET /api/v1/key-catalog', () => {
  let acct: TestAccount;
  const privates = [canary('priv1'), canary('priv2'), canary('priv3')];
  beforeAll(async () => {
    acct = await newAccount('catalog');
    const ctx = await s.ctxFor(acct.tenantId, acct.adminEmail);
    await createTyped(s, ctx, {
      type: 'ssh_key',
      name: 'deploy',
      meta: {
        algorithm: 'ed25519',
        bits: null,
        curve: null,
        fingerprint: 'SHA256:abc',
        public_key: 'ssh-ed25519 AAAAC3NzaPUBLIC',
        expires_at: '2030-01-01T00:00:00.000Z',
        has_private_key: true,
      },
      secret: { private_key: privates[0] },
    });
    await createTyped(s, ctx, {
      type: 'gpg_key',
      name: 'release',
      meta: { algorithm: 'rsa', bits: 3072, fingerprint: 'ABCDEF', expires_at: null },
      secret: { private_key: privates[1] },
    });
    await createTyped(s, ctx, {
      type: 'certificate',
      name: 'www',
      meta: {
        algorithm: 'ec',
        curve: 'P-256',
        fingerprint: 'cert-fp',
        not_after: '2027-05-01T00:00:00.000Z',
        status: 'active',
        certificate_pem: '-----BEGIN CERTIFICATE-----',
      },
      secret: { private_key: privates[2] },
    });
    // not key-like: never listed
    await createTyped(s, ctx, { type: 'password', name: 'not-a-key', secret: { password: canary() } });
    await api('POST', '/api/v1/secrets', { key: acct.adminKey, body: { name: 'also-not', data: { value: canary() } } });
  });

  it('lists every key-like resource with type, algorithm, fingerprint, created and expires; never private material', async () => {
    const res = await api('GET', '/api/v1/key-catalog', { key: await acct.key(['secrets:read']) });
    expect(res.status).toBe(200);
    expect(res.body.data.total).toBe(3);
    const byName = Object.fromEntries(res.body.data.keys.map((k: { name: string }) => [k.name, k]));
    expect(byName.deploy).toMatchObject({
      type: 'ssh_key',
      algorithm: 'ed25519',
      fingerprint: 'SHA256:abc',
      expires_at: '2030-01-01T00:00:00.000Z',
      has_private_key: true,
    });
    expect(byName.deploy.created_at).toMatch(/^\d{4}-/);
    expect(byName.release).toMatchObject({ type: 'gpg_key', algorithm: 'rsa', bits: 3072, expires_at: null });
    expect(byName.www).toMatchObject({ type: 'certificate', curve: 'P-256', expires_at: '2027-05-01T00:00:00.000Z', status: 'active' });
    for (const p of privates) expect(res.text).not.toContain(p);
    expect(res.text).not.toContain('PUBLIC');
    expect(res.text).not.toContain('BEGIN CERTIFICATE');
  });

  it('pages with limit and next_cursor across types; filters by type', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: ApiResponse = await api('GET', `/api/v1/key-catalog?limit=1${cursor ? `&cursor=${cursor}` : ''}`, { key: acct.adminKey });
      expect(res.status).toBe(200);
      expect(res.body.data.keys.length).toBeLessThanOrEqual(1);
      seen.push(...res.body.data.keys.map((k: { name: string }) => k.name));
      cursor = res.body.data.next_cursor;
    } while (cursor);
    expect(seen.sort()).toEqual(['deploy', 'release', 'www']);
    const only = await api('GET', '/api/v1/key-catalog?type=gpg_key', { key: acct.adminKey });
    expect(only.body.data.keys.map((k: { name: string }) => k.name)).toEqual(['release']);
  });

  it("only the caller's account; 400 on a bad limit, cursor, type or unknown parameter", async () => {
    const other = await api('GET', '/api/v1/key-catalog', { key: b.adminKey });
    expect(other.status).toBe(200);
    expect(other.body.data.keys).toEqual([]);
    for (const q of ['limit=0', 'limit=1001', 'cursor=garbage', 'type=password', 'color=red']) {
      const res = await api('GET', `/api/v1/key-catalog?${q}`, { key: acct.adminKey });
      expect(res.status, q).toBe(400);
    }
  });
});

describe('POST /api/v1/search/semantic', () => {
  let acct: TestAccount;
  const secretValues = [canary('srch1'), canary('srch2'), canary('srch3')];
  beforeAll(async () => {
    acct = await newAccount('search');
    const secrets = [
      { name: 'postgresql-prod-password', description: 'Primary PostgreSQL database for the billing service', tags: ['prod', 'database'] },
      { name: 'stripe-api-key', description: 'Payment provider key', tags: ['payments', 'prod'] },
      { name: 'staging-redis', description: 'Cache for staging', tags: ['staging'] },
    ];
    for (const [i, sec] of secrets.entries()) {
      expect((await api('POST', '/api/v1/secrets', { key: acct.adminKey, body: { ...sec, data: { value: secretValues[i] } } })).status).toBe(201);
    }
    const ctx = await s.ctxFor(acct.tenantId, acct.adminEmail);
    await createTyped(s, ctx, {
      type: 'ssh_key',
      name: 'bastion-deploy',
      meta: { description: 'SSH key for the bastion host', tags: ['ops'], algorithm: 'ed25519' },
      secret: { private_key: canary('srch-key') },
    });
  });

  it('ranks by names, descriptions, tags and types, best first, with scores; never values', async () => {
    const res = await api('POST', '/api/v1/search/semantic', { key: acct.adminKey, body: { query: 'postgres database' } });
    expect(res.status, res.text).toBe(200);
    const results = res.body.data.results as { name: string; score: number; type: string }[];
    expect(res.body.data.ranker).toBe('tfidf-char-3gram');
    expect(results[0]).toMatchObject({ name: 'postgresql-prod-password', type: 'secret' });
    for (let i = 1; i < results.length; i++) expect(results[i]!.score).toBeLessThanOrEqual(results[i - 1]!.score);
    expect(results[0]!.score).toBeGreaterThan(0);
    expect(results[0]!.score).toBeLessThanOrEqual(1);
    for (const v of secretValues) expect(res.text).not.toContain(v);
    // partial words and the type name match too
    const ssh = await api('POST', '/api/v1/search/semantic', { key: acct.adminKey, body: { query: 'ssh bastion' } });
    expect(ssh.body.data.results[0]).toMatchObject({ name: 'bastion-deploy', type: 'ssh_key' });
    const pay = await api('POST', '/api/v1/search/semantic', { key: acct.adminKey, body: { query: 'payment', limit: 1 } });
    expect(pay.body.data.results).toHaveLength(1);
    expect(pay.body.data.results[0].name).toBe('stripe-api-key');
  });

  it('searches only the types whose read scope the caller holds, or those asked for', async () => {
    const secretsOnly = await api('POST', '/api/v1/search/semantic', { key: await acct.key(['secrets:read']), body: { query: 'bastion ssh key' } });
    expect(secretsOnly.status).toBe(200);
    expect(secretsOnly.body.data.results.every((r: { type: string }) => r.type === 'secret')).toBe(true);
    expect(secretsOnly.body.data.searched.types).toEqual(['secret']);
    const typed = await api('POST', '/api/v1/search/semantic', { key: acct.adminKey, body: { query: 'prod', types: ['ssh_key'] } });
    expect(typed.body.data.results.every((r: { type: string }) => r.type === 'ssh_key')).toBe(true);
  });

  it("only the caller's account; 400 on an empty query, an unknown type, an unknown field, a bad limit", async () => {
    const other = await api('POST', '/api/v1/search/semantic', { key: b.adminKey, body: { query: 'postgresql prod password' } });
    expect(other.status).toBe(200);
    expect(other.body.data.results.map((r: { name: string }) => r.name)).not.toContain('postgresql-prod-password');
    for (const body of [
      { query: '' },
      { query: '   ' },
      { query: 'x', types: ['widget'] },
      { query: 'x', fuzzy: true },
      { query: 'x', limit: 0 },
      { query: 'x', limit: 101 },
      {},
    ]) {
      const res = await api('POST', '/api/v1/search/semantic', { key: acct.adminKey, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
  });
});

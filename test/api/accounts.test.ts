import { beforeAll, describe, expect, it } from 'vitest';
import { api, canary, errorCode, newAccount, rootKey, unique, type TestAccount } from '../helpers/api.js';

let a: TestAccount;
let b: TestAccount;
beforeAll(async () => {
  [a, b] = await Promise.all([newAccount('acc-a'), newAccount('acc-b')]);
});

describe('health', () => {
  it('GET / , /health, /healthz, /ready answer without credentials', async () => {
    expect((await api('GET', '/')).body.data).toMatchObject({ service: 'secrets-api', api: '/api/v1' });
    expect((await api('GET', '/health')).body.data).toEqual({ status: 'ok' });
    expect((await api('GET', '/healthz')).body.data).toEqual({ status: 'ok' });
    const ready = await api('GET', '/ready');
    expect(ready.status).toBe(200);
    expect(ready.body.data.checks).toEqual({ table: 'ok', key_provider: 'ok' });
  });
});

describe('operator: tenants', () => {
  it('POST creates an account with its first admin key, shown once, that works at once', async () => {
    const email = `${unique('owner')}@Example.test`;
    const res = await api('POST', '/api/v1/admin/tenants', { key: rootKey(), body: { name: 'acme', admin_email: email } });
    expect(res.status).toBe(201);
    const { tenant, api_key } = res.body.data;
    expect(tenant).toMatchObject({ name: 'acme', admin_email: email.toLowerCase(), status: 'active', operator: false });
    expect(api_key).toMatchObject({ scopes: ['admin:*'], created_by: email.toLowerCase(), status: 'active' });
    expect(api_key.key).toMatch(/^scm_[a-z2-7]{8}_[A-Za-z0-9_-]{43}$/);
    expect(api_key.key.startsWith(api_key.prefix)).toBe(true);
    const keys = await api('GET', '/api/v1/api-keys', { key: api_key.key });
    expect(keys.status).toBe(200);
    expect(keys.text).not.toContain(api_key.key);
    expect(keys.body.data.api_keys[0]).not.toHaveProperty('hash');
  });

  it.each([
    ['no admin_email', { name: 'x' }],
    ['an invalid e-mail', { name: 'x', admin_email: 'not-an-email' }],
    ['an unknown field', { name: 'x', admin_email: 'a@b.test', plan: 'gold' }],
    ['a name over 128 characters', { name: 'n'.repeat(129), admin_email: 'a@b.test' }],
  ])('400 on %s', async (_l, body) => {
    const res = await api('POST', '/api/v1/admin/tenants', { key: rootKey(), body });
    expect(res.status).toBe(400);
    expect(errorCode(res)).toBe('validation_failed');
  });

  it('GET lists accounts with a cursor; 400 on a bad limit or cursor', async () => {
    const page = await api('GET', '/api/v1/admin/tenants?limit=2', { key: rootKey() });
    expect(page.status).toBe(200);
    expect(page.body.data.tenants).toHaveLength(2);
    const next = await api('GET', `/api/v1/admin/tenants?limit=2&cursor=${page.body.data.next_cursor}`, { key: rootKey() });
    expect(next.status).toBe(200);
    expect(next.body.data.tenants[0].id).not.toBe(page.body.data.tenants[0].id);
    expect((await api('GET', '/api/v1/admin/tenants?limit=0', { key: rootKey() })).status).toBe(400);
    expect((await api('GET', '/api/v1/admin/tenants?cursor=abc', { key: rootKey() })).status).toBe(400);
  });

  it('suspend: every request of that account gets 403 at once; activate restores it', async () => {
    const t = await newAccount('susp');
    const value = canary('susp');
    expect((await api('POST', '/api/v1/secrets', { key: t.adminKey, body: { name: 's', data: { value } } })).status).toBe(201);
    const sus = await api('PATCH', `/api/v1/admin/tenants/${t.tenantId}/suspend`, { key: rootKey() });
    expect(sus.status).toBe(200);
    expect(sus.body.data.tenant.status).toBe('suspended');
    for (const [m, p] of [
      ['GET', '/api/v1/secrets/s'],
      ['GET', '/api/v1/secrets'],
      ['GET', '/api/v1/usage'],
      ['GET', '/api/v1/quotas'],
      ['GET', '/api/v1/certificates'],
    ] as const) {
      const res = await api(m, p, { key: t.adminKey });
      expect(res.status, p).toBe(403);
      expect(errorCode(res)).toBe('tenant_suspended');
    }
    expect((await api('PATCH', `/api/v1/admin/tenants/${t.tenantId}/activate`, { key: rootKey() })).body.data.tenant.status).toBe('active');
    expect((await api('GET', '/api/v1/secrets/s', { key: t.adminKey })).body.data.secret.data.value).toBe(value);
  });

  it('404 for an unknown tenant, 400 for an id that is not a UUID, 400 on self-suspension', async () => {
    expect((await api('PATCH', '/api/v1/admin/tenants/01900000-0000-7000-8000-000000000009/suspend', { key: rootKey() })).status).toBe(404);
    expect((await api('PATCH', '/api/v1/admin/tenants/nope/activate', { key: rootKey() })).status).toBe(400);
    const self = await api('PATCH', '/api/v1/admin/tenants/00000000-0000-7000-8000-000000000001/suspend', { key: rootKey() });
    expect(self.status).toBe(400);
  });

  it('PUT quota sets limits that are enforced on creates and reported by /quotas and /usage', async () => {
    const t = await newAccount('quota');
    const q = await api('PUT', `/api/v1/admin/tenants/${t.tenantId}/quota`, { key: rootKey(), body: { max_secrets: 2 } });
    expect(q.status).toBe(200);
    expect(q.body.data.tenant.quota.max_secrets).toBe(2);
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => api('POST', '/api/v1/secrets', { key: t.adminKey, body: { name: `q${i}`, data: { value: canary() } } })),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(2);
    for (const r of results.filter((x) => x.status !== 201)) {
      expect(r.status).toBe(403);
      expect(errorCode(r)).toBe('quota_exceeded');
    }
    expect((await api('GET', '/api/v1/quotas', { key: t.adminKey })).body.data.quota.max_secrets).toBe(2);
    const usage = await api('GET', '/api/v1/usage', { key: t.adminKey });
    expect(usage.body.data.secrets).toEqual({ used: 2, limit: 2 });
    expect(usage.body.data.requests.today).toBeGreaterThan(0);
    const first = results.find((r) => r.status === 201)!.body.data.secret.name;
    expect((await api('DELETE', `/api/v1/secrets/${first}`, { key: t.adminKey })).status).toBe(200);
    expect((await api('GET', '/api/v1/usage', { key: t.adminKey })).body.data.secrets.used).toBe(1);
  });

  it('400 on an empty or invalid quota, 404 for an unknown tenant', async () => {
    expect((await api('PUT', `/api/v1/admin/tenants/${a.tenantId}/quota`, { key: rootKey(), body: {} })).status).toBe(400);
    expect((await api('PUT', `/api/v1/admin/tenants/${a.tenantId}/quota`, { key: rootKey(), body: { max_secrets: -1 } })).status).toBe(400);
    expect((await api('PUT', `/api/v1/admin/tenants/${a.tenantId}/quota`, { key: rootKey(), body: { max_widgets: 1 } })).status).toBe(400);
    expect(
      (await api('PUT', '/api/v1/admin/tenants/01900000-0000-7000-8000-000000000009/quota', { key: rootKey(), body: { max_secrets: 1 } })).status,
    ).toBe(404);
  });
});

describe('API keys', () => {
  it('creates a scoped key that can do what its scopes allow and nothing else', async () => {
    const res = await api('POST', '/api/v1/api-keys', { key: a.adminKey, body: { name: 'reader', scopes: ['secrets:read'] } });
    expect(res.status).toBe(201);
    const key = res.body.data.api_key;
    expect(key).toMatchObject({ name: 'reader', scopes: ['secrets:read'], created_by: a.adminEmail });
    expect((await api('GET', '/api/v1/secrets', { key: key.key })).status).toBe(200);
    expect((await api('POST', '/api/v1/secrets', { key: key.key, body: { name: 'x', data: { value: canary() } } })).status).toBe(403);
    expect((await api('GET', '/api/v1/api-keys', { key: key.key })).status).toBe(403);
  });

  it.each([
    ['an unknown scope', { name: 'k', scopes: ['secrets:everything'] }],
    ['no scopes', { name: 'k', scopes: [] }],
    ['an expiry in the past', { name: 'k', scopes: ['secrets:read'], expires_at: '2001-01-01T00:00:00Z' }],
    ['an expiry that is not a date', { name: 'k', scopes: ['secrets:read'], expires_at: 'tomorrow' }],
    ['an unknown field', { name: 'k', scopes: ['secrets:read'], owner: 'x' }],
  ])('400 on %s', async (_l, body) => {
    const res = await api('POST', '/api/v1/api-keys', { key: a.adminKey, body });
    expect(res.status).toBe(400);
  });

  it('revocation takes effect on the very next request; a second revoke is 404', async () => {
    const created = await api('POST', '/api/v1/api-keys', { key: a.adminKey, body: { name: 'temp', scopes: ['secrets:read'] } });
    const { id, key } = created.body.data.api_key;
    expect((await api('GET', '/api/v1/secrets', { key })).status).toBe(200);
    const del = await api('DELETE', `/api/v1/api-keys/${id}`, { key: a.adminKey });
    expect(del.status).toBe(200);
    expect(del.body.data.api_key).toMatchObject({ id, status: 'revoked' });
    const after = await api('GET', '/api/v1/secrets', { key });
    expect(after.status).toBe(401);
    expect((await api('DELETE', `/api/v1/api-keys/${id}`, { key: a.adminKey })).status).toBe(404);
    const listed = (await api('GET', '/api/v1/api-keys', { key: a.adminKey })).body.data.api_keys.find((k: any) => k.id === id);
    expect(listed.status).toBe('revoked');
  });

  it('an expired key is refused with 401', async () => {
    const soon = new Date(Date.now() + 1500).toISOString();
    const created = await api('POST', '/api/v1/api-keys', { key: a.adminKey, body: { name: 'short', scopes: ['secrets:read'], expires_at: soon } });
    expect(created.status).toBe(201);
    await new Promise((r) => setTimeout(r, 1700));
    const res = await api('GET', '/api/v1/secrets', { key: created.body.data.api_key.key });
    expect(res.status).toBe(401);
    expect(errorCode(res)).toBe('credentials_expired');
  });

  it("404 when revoking another account's key; 400 for an id that is not a UUID", async () => {
    const other = await api('POST', '/api/v1/api-keys', { key: b.adminKey, body: { name: 'b', scopes: ['secrets:read'] } });
    const id = other.body.data.api_key.id;
    expect((await api('DELETE', `/api/v1/api-keys/${id}`, { key: a.adminKey })).status).toBe(404);
    expect((await api('GET', '/api/v1/secrets', { key: other.body.data.api_key.key })).status).toBe(200);
    expect((await api('DELETE', '/api/v1/api-keys/12', { key: a.adminKey })).status).toBe(400);
  });

  it("lists only the caller account's keys, never a key or hash", async () => {
    const res = await api('GET', '/api/v1/api-keys', { key: b.adminKey });
    expect(res.status).toBe(200);
    expect(res.body.data.api_keys.every((k: any) => !('key' in k) && !('hash' in k))).toBe(true);
    expect(res.text).not.toMatch(/scm_[a-z2-7]{8}_[A-Za-z0-9_-]{43}/);
  });

  it('401 on malformed or unknown bearer tokens', async () => {
    for (const authorization of ['Bearer', 'Basic abc', `Bearer ${'x'.repeat(20)}`, 'Bearer scm_aaaaaaaa_' + 'A'.repeat(43)]) {
      const res = await api('GET', '/api/v1/secrets', { headers: { authorization } });
      expect(res.status, authorization).toBe(401);
    }
  });
});

describe('quotas and usage', () => {
  it('report the caller account only', async () => {
    const qa = await api('GET', '/api/v1/quotas', { key: a.adminKey });
    const qb = await api('GET', '/api/v1/quotas', { key: b.adminKey });
    expect(qa.body.data.tenant_id).toBe(a.tenantId);
    expect(qb.body.data.tenant_id).toBe(b.tenantId);
    const key = await a.key(['secrets:read']);
    const usage = await api('GET', '/api/v1/usage', { key });
    expect(usage.status).toBe(200);
    expect(usage.body.data).toMatchObject({ tenant_id: a.tenantId, api_keys: { used: expect.any(Number) } });
  });
});

import { beforeAll, describe, expect, it } from 'vitest';
import { api, canary, errorCode, newAccount, rootKey, unique, type TestAccount } from '../helpers/api.js';

/**
 * Temporary access and the owner's account: redemption while the owner account is suspended
 * (403, then good again once it is reactivated), and no grant on a container.
 */
let a: TestAccount;
let key: string;
beforeAll(async () => {
  a = await newAccount('temp-owner');
  key = await a.key(['secrets:read', 'secrets:write', 'temp-access:create', 'containers:read', 'containers:write']);
});

const redeem = (url: string) => api('GET', new URL(url).pathname);

describe('temporary access and the owner account', () => {
  it('redeeming while the owner account is suspended: 403 tenant_suspended, and the grant is not used up', async () => {
    const value = canary('temp-owner');
    const sec = await api('POST', '/api/v1/secrets', { key, body: { name: unique('t'), data: { value } } });
    expect(sec.status, sec.text).toBe(201);
    const g = await api('POST', `/api/v1/secret/${sec.body.data.secret.id}/temp-access`, { key, body: { duration_seconds: 600 } });
    expect(g.status, g.text).toBe(201);
    expect((await api('PATCH', `/api/v1/admin/tenants/${a.tenantId}/suspend`, { key: rootKey() })).status).toBe(200);
    try {
      const refused = await redeem(g.body.data.url);
      expect(refused.status).toBe(403);
      expect(errorCode(refused)).toBe('tenant_suspended');
      expect(refused.text).not.toContain(value);
    } finally {
      expect((await api('PATCH', `/api/v1/admin/tenants/${a.tenantId}/activate`, { key: rootKey() })).status).toBe(200);
    }
    const ok = await redeem(g.body.data.url);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.data.data).toEqual({ value });
  });

  it('a container has no value to hand out: 400 naming the type', async () => {
    const c = await api('POST', '/api/v1/containers', { key, body: { name: unique('box') } });
    expect(c.status, c.text).toBe(201);
    const g = await api('POST', `/api/v1/container/${c.body.data.container.id}/temp-access`, { key, body: { duration_seconds: 300 } });
    expect(g.status).toBe(400);
    expect(errorCode(g)).toBe('bad_request');
    expect(g.body).toMatchObject({ error: 'a container has no value to hand out: grant access to the resources in it', details: [{ path: 'params.type', message: 'not for containers' }] });
  });
});

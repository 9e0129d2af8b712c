import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateDeviceKey, signedFetch, type DeviceKey } from '../../scripts/agent-client.js';
import { api, baseUrl, canary, newAccount, unique, type TestAccount } from '../helpers/api.js';
import { useRuntimeConfig } from '../helpers/in-process.js';

/**
 * POST /api/v1/agent/variables/resolve: a device resolves variables only when every
 * underlying credential is granted to it (`secret.read`), all or nothing.
 */
let a: TestAccount;
let device: { id: string; key: DeviceKey };
let granted: { id: string; value: string };
let other: { id: string; value: string };

async function secret(key: string) {
  const value = canary('var');
  const res = await api('POST', '/api/v1/secrets', { key, body: { name: unique('v'), data: { value } } });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.data.secret.id as string, value };
}

const resolve = (body: unknown) => signedFetch(baseUrl(), device, 'POST', '/api/v1/agent/variables/resolve', body);

beforeAll(async () => {
  useRuntimeConfig();
  a = await newAccount('agents-vars');
  [granted, other] = await Promise.all([secret(a.adminKey), secret(a.adminKey)]);
  // bind the variables through the variables library (same table as the runtime)
  const { putVariable } = await import('../../lib/variables/store.js');
  const { getTenant } = await import('../../lib/store/tenants.js');
  const tenant = (await getTenant(a.tenantId))!;
  const ctx = {
    principal: { kind: 'api_key' as const, tenantId: tenant.id, tenant, id: 'test', user: a.adminEmail, scopes: ['admin:*'], operator: false },
    requestId: 'agents-vars',
    sourceIp: null,
    userAgent: null,
  };
  await putVariable(ctx, 'DB_PASS', { credential_id: granted.id, field: 'value' });
  await putVariable(ctx, 'OTHER_PASS', { credential_id: other.id, field: 'value' });
  const pid = randomUUID();
  const profile = await api('PUT', `/api/v1/agents/profiles/${pid}`, {
    key: a.adminKey,
    body: { name: 'vars', enabled: true, grants: [{ alias: 'db', service: 'secret.read', resource: granted.id }] },
  });
  expect(profile.status, profile.text).toBe(201);
  const key = generateDeviceKey();
  const res = await api('POST', '/api/v1/agents/devices', {
    key: a.adminKey,
    body: { name: unique('vars-dev'), public_key: key.publicJwk, profile_id: pid },
  });
  expect(res.status, res.text).toBe(201);
  device = { id: res.body.data.device.id, key };
});

describe('POST /api/v1/agent/variables/resolve', () => {
  it('resolves names and templates whose credentials are granted', async () => {
    const byName = await resolve({ names: ['DB_PASS'] });
    expect(byName.status, JSON.stringify(byName.body)).toBe(200);
    expect(byName.body.data).toMatchObject({ names: ['DB_PASS'], values: { DB_PASS: granted.value }, audit_id: expect.any(String) });
    const tpl = await resolve({ template: 'postgres://app:${{ vars.DB_PASS }}@db/app' });
    expect(tpl.status).toBe(200);
    expect(tpl.body.data.result).toBe(`postgres://app:${granted.value}@db/app`);
  });

  it('one variable over an ungranted credential fails the whole call (403) without any value', async () => {
    const res = await resolve({ names: ['DB_PASS', 'OTHER_PASS'] });
    expect(res.status).toBe(403);
    expect(res.body.details).toEqual([{ path: 'vars.OTHER_PASS', message: expect.any(String) }]);
    expect(JSON.stringify(res.body)).not.toContain(granted.value);
    expect(JSON.stringify(res.body)).not.toContain(other.value);
  });

  it('an unknown variable is 404; a malformed request is 400', async () => {
    expect((await resolve({ names: ['NOPE'] })).status).toBe(404);
    expect((await resolve({ names: ['DB_PASS'], template: 'x' })).status).toBe(400);
    expect((await resolve({ names: ['DB_PASS'], extra: 1 })).status).toBe(400);
    expect((await resolve({ template: '${{ secrets.X }}' })).status).toBe(400);
  });
});

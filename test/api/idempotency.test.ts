import { beforeAll, describe, expect, it } from 'vitest';
import { api, canary, errorCode, newAccount, unique, type TestAccount } from '../helpers/api.js';

let a: TestAccount;
beforeAll(async () => {
  a = await newAccount('idem');
});

describe('Idempotency-Key on mutations', () => {
  it('a retry with the same key and request replays the first response and writes nothing twice', async () => {
    const key = unique('idem');
    const body = { name: unique('once'), data: { value: canary('idem') } };
    const first = await api('POST', '/api/v1/secrets', { key: a.adminKey, body, headers: { 'idempotency-key': key } });
    expect(first.status).toBe(201);
    const again = await api('POST', '/api/v1/secrets', { key: a.adminKey, body, headers: { 'idempotency-key': key } });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('etag')).toBe(first.headers.get('etag'));
    const read = await api('GET', `/api/v1/secrets/${body.name}`, { key: a.adminKey });
    expect(read.body.data.secret.version).toBe(1);
    // without the key, the same request is a duplicate
    expect((await api('POST', '/api/v1/secrets', { key: a.adminKey, body })).status).toBe(409);
  });

  it('the same key with a different request is a 409; an invalid key a 400', async () => {
    const key = unique('idem');
    expect(
      (
        await api('POST', '/api/v1/secrets', {
          key: a.adminKey,
          body: { name: unique('x'), data: { value: canary() } },
          headers: { 'idempotency-key': key },
        })
      ).status,
    ).toBe(201);
    const other = await api('POST', '/api/v1/secrets', {
      key: a.adminKey,
      body: { name: unique('y'), data: { value: canary() } },
      headers: { 'idempotency-key': key },
    });
    expect(other.status).toBe(409);
    expect(errorCode(other)).toBe('idempotency_key_reused');
    const bad = await api('POST', '/api/v1/secrets', {
      key: a.adminKey,
      body: { name: unique('z'), data: { value: canary() } },
      headers: { 'idempotency-key': 'has space' },
    });
    expect(bad.status).toBe(400);
  });

  it('an error releases the key, so a corrected retry runs', async () => {
    const key = unique('idem');
    const name = unique('exists');
    await api('POST', '/api/v1/secrets', { key: a.adminKey, body: { name, data: { value: canary() } } });
    const dup = await api('POST', '/api/v1/secrets', { key: a.adminKey, body: { name, data: { value: 'x' } }, headers: { 'idempotency-key': key } });
    expect(dup.status).toBe(409);
    await api('DELETE', `/api/v1/secrets/${name}`, { key: a.adminKey });
    const retry = await api('POST', '/api/v1/secrets', {
      key: a.adminKey,
      body: { name, data: { value: 'x' } },
      headers: { 'idempotency-key': key },
    });
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
  });

  it('keys are per credential: another key of the account runs its own request', async () => {
    const key = unique('idem');
    const other = await a.key(['secrets:write', 'secrets:read']);
    const r1 = await api('POST', '/api/v1/secrets', {
      key: a.adminKey,
      body: { name: unique('p1'), data: { value: canary() } },
      headers: { 'idempotency-key': key },
    });
    const r2 = await api('POST', '/api/v1/secrets', {
      key: other,
      body: { name: unique('p2'), data: { value: canary() } },
      headers: { 'idempotency-key': key },
    });
    expect([r1.status, r2.status]).toEqual([201, 201]);
  });

  it('a replayed API key creation returns the same key, which is stored sealed only', async () => {
    const key = unique('idem');
    const body = { name: 'replayed', scopes: ['secrets:read'] };
    const first = await api('POST', '/api/v1/api-keys', { key: a.adminKey, body, headers: { 'idempotency-key': key } });
    const again = await api('POST', '/api/v1/api-keys', { key: a.adminKey, body, headers: { 'idempotency-key': key } });
    expect(again.body.data.api_key.key).toBe(first.body.data.api_key.key);
    const keys = await api('GET', '/api/v1/api-keys', { key: a.adminKey });
    expect(keys.body.data.api_keys.filter((k: any) => k.name === 'replayed')).toHaveLength(1);
  });
});

import { beforeAll, describe, expect, it } from 'vitest';
import { api, newAccount, type TestAccount } from '../helpers/api.js';

/** Private key material is opened outside its export routes only with export:read as well. */
let a: TestAccount;
let keyId: string;
beforeAll(async () => {
  a = await newAccount('hist-keys');
  const res = await api('POST', '/api/v1/ssh-keys/generate', { key: a.adminKey, body: { name: 'deploy', algorithm: 'ed25519' } });
  expect(res.status, res.text).toBe(201);
  keyId = res.body.data.ssh_key.id;
});

describe('history of key material', () => {
  it('redacts a private key for history:read + ssh:read without export:read', async () => {
    const key = await a.key(['history:read', 'ssh:read']);
    const res = await api('GET', `/api/v1/ssh_key/${keyId}/history/1`, { key });
    expect(res.status).toBe(200);
    expect(res.body.data.version).toMatchObject({ value_redacted: true, missing_scopes: ['export:read'] });
    expect(res.text).not.toContain('PRIVATE KEY');
  });

  it('shows it with export:read too', async () => {
    const key = await a.key(['history:read', 'ssh:read', 'export:read']);
    const res = await api('GET', `/api/v1/ssh_key/${keyId}/history/1`, { key });
    expect(res.status).toBe(200);
    expect(res.body.data.version.value_redacted).toBe(false);
    // the stored private key of version 1, exactly as the key's own export route gives it
    const exported = await api('GET', `/api/v1/ssh-keys/${keyId}/export?private=true`, { key });
    expect(exported.status, exported.text).toBe(200);
    expect(exported.body.data.export.private_key).toMatch(/^-----BEGIN OPENSSH PRIVATE KEY-----\n[\s\S]+\n-----END OPENSSH PRIVATE KEY-----\n$/);
    expect(res.body.data.version.data).toEqual({ private_key: exported.body.data.export.private_key });
    // and it is the private half of the key's public key
    const sshpk = await import('sshpk');
    const derived = sshpk.parsePrivateKey(res.body.data.version.data.private_key, 'ssh').toPublic().toString('ssh').split(' ').slice(0, 2);
    expect(derived).toEqual(res.body.data.version.meta.public_key.split(' ').slice(0, 2));
  });

  it('refuses a temporary access grant on a key without export:read', async () => {
    const key = await a.key(['temp-access:create', 'ssh:read']);
    const res = await api('POST', `/api/v1/ssh_key/${keyId}/temp-access`, { key, body: { duration_seconds: 300 } });
    expect(res.status).toBe(403);
  });
});

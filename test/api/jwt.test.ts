import { beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, generateKeyPair } from 'jose';
import { api, canary, errorCode, newAccount, type TestAccount } from '../helpers/api.js';
import { useRuntimeConfig } from '../helpers/in-process.js';

/** JWT access tokens authenticate behind the same principal type as API keys. */
let a: TestAccount;
let jwt: typeof import('../../lib/auth/jwt.js');

beforeAll(async () => {
  useRuntimeConfig();
  jwt = await import('../../lib/auth/jwt.js');
  a = await newAccount('jwt');
  await api('POST', '/api/v1/secrets', { key: a.adminKey, body: { name: 'jwt-secret', data: { value: canary('jwt') } } });
});

describe('JWT access tokens', () => {
  it('a token issued for a user with secrets:read reads secrets and records that user', async () => {
    const token = await jwt.issueAccessToken(a.tenantId, 'carol@example.test', ['secrets:read']);
    const res = await api('GET', '/api/v1/secrets/jwt-secret', { key: token });
    expect(res.status).toBe(200);
    const denied = await api('POST', '/api/v1/secrets', { key: token, body: { name: 'x', data: { value: canary() } } });
    expect(denied.status).toBe(403);
    expect(errorCode(denied)).toBe('insufficient_scope');
  });

  it('refuses expired, tampered, foreign-signed and wrong-tenant tokens', async () => {
    const expired = await jwt.issueAccessToken(a.tenantId, 'carol@example.test', ['secrets:read'], -60);
    expect((await api('GET', '/api/v1/secrets', { key: expired })).status).toBe(401);

    const good = await jwt.issueAccessToken(a.tenantId, 'carol@example.test', ['secrets:read']);
    const [h, p, s] = good.split('.');
    const claims = JSON.parse(Buffer.from(p!, 'base64url').toString());
    const forged = [h, Buffer.from(JSON.stringify({ ...claims, scope: 'admin:*' })).toString('base64url'), s].join('.');
    expect((await api('GET', '/api/v1/api-keys', { key: forged })).status).toBe(401);

    const { privateKey } = await generateKeyPair('ES256');
    const header = JSON.parse(Buffer.from(h!, 'base64url').toString());
    const foreign = await new SignJWT(claims).setProtectedHeader(header).sign(privateKey);
    expect((await api('GET', '/api/v1/secrets', { key: foreign })).status).toBe(401);

    const other = await newAccount('jwt-other');
    const cross = [h, Buffer.from(JSON.stringify({ ...claims, tid: other.tenantId })).toString('base64url'), s].join('.');
    expect((await api('GET', '/api/v1/secrets', { key: cross })).status).toBe(401);
  });
});

import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, errorCode, newAccount, unique, type TestAccount } from '../helpers/api.js';

/**
 * POST /api/v1/openssl-keys/import: what it refuses (both or neither part, a passphrase
 * with a public key, short RSA, X25519), a public-key-only import, and the export formats.
 */
let a: TestAccount;
let writer: string;
beforeAll(async () => {
  a = await newAccount('openssl-import');
  writer = await a.key(['credentials:read', 'credentials:write', 'export:read']);
});
const importKey = (body: Record<string, unknown>) => api('POST', '/api/v1/openssl-keys/import', { key: writer, body: { name: unique('imp'), ...body } });

describe('importing OpenSSL keys', () => {
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const privatePem = ec.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  const publicPem = ec.publicKey.export({ type: 'spki', format: 'pem' }) as string;

  it('exactly one of private_key and public_key; a passphrase only with a private key', async () => {
    for (const [body, message] of [
      [{}, 'send exactly one of private_key and public_key'],
      [{ private_key: privatePem, public_key: publicPem }, 'send exactly one of private_key and public_key'],
      [{ public_key: publicPem, passphrase: 'pw-pw-pw-pw' }, 'passphrase applies to private_key only'],
    ] as const) {
      const res = await importKey(body);
      expect(res.status, res.text).toBe(400);
      expect(errorCode(res)).toBe('bad_request');
      expect(res.body.error).toBe(message);
    }
  });

  it('refuses RSA shorter than 2048 bits and X25519 keys', async () => {
    const short = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' });
    const res = await importKey({ private_key: short });
    expect(res.status, res.text).toBe(400);
    expect(errorCode(res)).toBe('invalid_key');
    expect(res.body.error).toBe('RSA keys shorter than 2048 bits are refused');
    const x = generateKeyPairSync('x25519').privateKey.export({ type: 'pkcs8', format: 'pem' });
    const xr = await importKey({ private_key: x });
    expect(xr.status, xr.text).toBe(400);
    expect(errorCode(xr)).toBe('invalid_key');
    expect(xr.body.error).toBe('X25519 keys are not supported here: use RSA, EC or Ed25519');
  });

  it('a public key alone: no private part, exported as PEM, DER and JWK', async () => {
    const res = await importKey({ public_key: publicPem });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.openssl_key).toMatchObject({ has_private_key: false, source: 'imported' });
    const id = res.body.data.openssl_key.id as string;
    for (const format of ['pem', 'der', 'jwk'] as const) {
      const out = await api('GET', `/api/v1/openssl-keys/${id}/export?format=${format}`, { key: writer });
      expect(out.status, out.text).toBe(200);
      const exp = out.body.data.export;
      expect(exp.private_key).toBeUndefined();
      const pub =
        format === 'pem'
          ? createPublicKey(exp.public_key)
          : format === 'der'
            ? createPublicKey({ key: Buffer.from(exp.public_key, 'base64'), format: 'der', type: 'spki' })
            : createPublicKey({ key: exp.public_key, format: 'jwk' });
      expect(pub.export({ format: 'jwk' })).toEqual(ec.publicKey.export({ format: 'jwk' }));
    }
  });

  it('a private key: its private half exported in each format', async () => {
    const res = await importKey({ private_key: privatePem });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.openssl_key).toMatchObject({ has_private_key: true });
    const id = res.body.data.openssl_key.id as string;
    const der = await api('GET', `/api/v1/openssl-keys/${id}/export?format=der`, { key: writer });
    expect(der.status, der.text).toBe(200);
    const priv = createPrivateKey({ key: Buffer.from(der.body.data.export.private_key, 'base64'), format: 'der', type: 'pkcs8' });
    expect(priv.export({ format: 'jwk' })).toEqual(ec.privateKey.export({ format: 'jwk' }));
  });
});

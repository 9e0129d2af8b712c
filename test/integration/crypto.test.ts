import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { DecryptCommand, DescribeKeyCommand, GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeAll, describe, expect, it } from 'vitest';
import { kmsKeyProvider } from '../../lib/crypto/kms.js';
import { loadMasterKey, localKeyring } from '../../lib/crypto/keyring.js';
import { useRuntimeConfig } from '../helpers/in-process.js';
import { testDirectory } from '../helpers/scratch.js';

describe('KMS key provider (mocked: no KMS engine here) sends exactly these requests', () => {
  const kms = mockClient(KMSClient);
  const keyId = 'arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab';
  const provider = kmsKeyProvider(new KMSClient({ region: 'eu-west-1' }), keyId);

  it('GenerateDataKey: AES_256 under the key, with the tenant encryption context', async () => {
    kms.reset();
    const plaintext = randomBytes(32);
    kms.on(GenerateDataKeyCommand).resolves({ Plaintext: plaintext, CiphertextBlob: Buffer.from('wrapped') });
    const out = await provider.generateDataKey({ tenant_id: 't-1' });
    expect(kms.commandCalls(GenerateDataKeyCommand)[0]!.args[0].input).toEqual({
      KeyId: keyId,
      KeySpec: 'AES_256',
      EncryptionContext: { tenant_id: 't-1' },
    });
    expect(out.plaintext.equals(plaintext)).toBe(true);
  });

  it('Decrypt: the wrapped key, the key id and the same encryption context', async () => {
    kms.reset();
    kms.on(DecryptCommand).resolves({ Plaintext: Buffer.alloc(32, 7) });
    await provider.decryptDataKey(Buffer.from('wrapped'), { tenant_id: 't-1' });
    expect(kms.commandCalls(DecryptCommand)[0]!.args[0].input).toEqual({
      KeyId: keyId,
      CiphertextBlob: Buffer.from('wrapped'),
      EncryptionContext: { tenant_id: 't-1' },
    });
  });

  it('check: DescribeKey, failing on a disabled key', async () => {
    kms.reset();
    kms.on(DescribeKeyCommand).resolves({ KeyMetadata: { KeyId: keyId, Enabled: false } });
    await expect(provider.check()).rejects.toThrow(/not enabled/);
    expect(kms.commandCalls(DescribeKeyCommand)[0]!.args[0].input).toEqual({ KeyId: keyId });
  });
});

describe('local keyring', () => {
  it('creates a 0600 master key file once and reuses it', () => {
    const file = join(testDirectory('keyring-'), 'sub', 'master.key');
    const k1 = loadMasterKey(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(loadMasterKey(file).equals(k1)).toBe(true);
  });

  it('unwraps only under the same encryption context and master key', async () => {
    const ring = localKeyring(randomBytes(32));
    const dk = await ring.generateDataKey({ tenant_id: 'a' });
    expect((await ring.decryptDataKey(dk.wrapped, { tenant_id: 'a' })).equals(dk.plaintext)).toBe(true);
    await expect(ring.decryptDataKey(dk.wrapped, { tenant_id: 'b' })).rejects.toThrow();
    await expect(localKeyring(randomBytes(32)).decryptDataKey(dk.wrapped, { tenant_id: 'a' })).rejects.toThrow();
  });
});

describe('envelope encryption against the real table', () => {
  let env: typeof import('../../lib/crypto/envelope.js');
  beforeAll(async () => {
    useRuntimeConfig();
    env = await import('../../lib/crypto/envelope.js');
  });
  const tenant = () => `0190${randomBytes(4).toString('hex')}-0000-7000-8000-${randomBytes(6).toString('hex')}`;

  it('round-trips, with a fresh IV per seal (same plaintext, different ciphertexts)', async () => {
    const t = tenant();
    const scope = { tenantId: t, type: 'secret', id: 'id-1', version: 1 };
    const a = await env.seal(scope, 'CANARY-envelope-plain');
    const b = await env.seal(scope, 'CANARY-envelope-plain');
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(false);
    expect((await env.open(scope, a)).toString()).toBe('CANARY-envelope-plain');
    expect(Buffer.from(a).toString('latin1')).not.toContain('CANARY');
  });

  it('a ciphertext copied to another id, version, type or tenant fails to open', async () => {
    const t = tenant();
    const scope = { tenantId: t, type: 'secret', id: 'id-1', version: 3 };
    const sealed = await env.seal(scope, 'x');
    await expect(env.open({ ...scope, id: 'id-2' }, sealed)).rejects.toThrow();
    await expect(env.open({ ...scope, version: 2 }, sealed)).rejects.toThrow();
    await expect(env.open({ ...scope, type: 'password' }, sealed)).rejects.toThrow();
    await expect(env.open({ ...scope, tenantId: tenant() }, sealed)).rejects.toThrow();
    const tampered = Buffer.from(sealed);
    tampered[tampered.length - 1]! ^= 1;
    await expect(env.open(scope, tampered)).rejects.toThrow();
  });

  it('concurrent first seals of a new tenant agree on one data key', async () => {
    const t = tenant();
    const scope = { tenantId: t, type: 'secret', id: 'id', version: 1 };
    const sealed = await Promise.all(Array.from({ length: 8 }, () => env.seal(scope, 'same')));
    for (const s of sealed) expect((await env.open(scope, s)).toString()).toBe('same');
  });
});

import { randomBytes } from 'node:crypto';
import { statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DecryptCommand, DescribeKeyCommand, GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, describe, expect, it } from 'vitest';
import { contextAad, loadMasterKey, localKeyring } from '../../lib/crypto/keyring.js';
import { kmsKeyProvider } from '../../lib/crypto/kms.js';
import { testDirectory } from '../helpers/scratch.js';

/**
 * The two key providers' refusals and edges: the local keyring (master key file, wrapped
 * format, the encryption context in any key order) and the KMS adapter's answers without a
 * key (KMS is mocked: no KMS engine here).
 */
describe('local keyring', () => {
  it('the master key file: created with its folders (0700) and mode 0600; a file of another length is refused', () => {
    const file = join(testDirectory('ring-'), 'a', 'b', 'master.key');
    expect(loadMasterKey(file)).toHaveLength(32);
    expect(statSync(dirname(file)).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const short = join(testDirectory('ring-'), 'short.key');
    writeFileSync(short, randomBytes(31));
    expect(() => loadMasterKey(short)).toThrow(`master key file ${short} must hold exactly 32 bytes`);
    // an existing file is tightened to 0600
    const loose = join(testDirectory('ring-'), 'loose.key');
    writeFileSync(loose, randomBytes(32), { mode: 0o644 });
    loadMasterKey(loose);
    expect(statSync(loose).mode & 0o777).toBe(0o600);
  });

  it('the encryption context binds in any key order; another value or an extra key does not open', async () => {
    expect(contextAad({ b: '2', a: '1' }).equals(contextAad({ a: '1', b: '2' }))).toBe(true);
    expect(contextAad({ a: '1' }).toString()).toBe('[["a","1"]]');
    const ring = localKeyring(randomBytes(32));
    expect(ring.name).toBe('local');
    const dk = await ring.generateDataKey({ tenant_id: 't', purpose: 'p' });
    expect(dk.plaintext).toHaveLength(32);
    expect((await ring.decryptDataKey(dk.wrapped, { purpose: 'p', tenant_id: 't' })).equals(dk.plaintext)).toBe(true);
    await expect(ring.decryptDataKey(dk.wrapped, { tenant_id: 't' })).rejects.toThrow();
    await expect(ring.decryptDataKey(dk.wrapped, { tenant_id: 't', purpose: 'p', x: '' })).rejects.toThrow();
  });

  it('the wrapped form: version 1, 61 bytes; anything else is refused before decryption', async () => {
    const ring = localKeyring(randomBytes(32));
    const { wrapped } = await ring.generateDataKey({ tenant_id: 't' });
    const w = Buffer.from(wrapped);
    expect(w.length).toBe(1 + 12 + 16 + 32);
    expect(w[0]).toBe(1);
    const wrongVersion = Buffer.from(w);
    wrongVersion[0] = 2;
    await expect(ring.decryptDataKey(wrongVersion, { tenant_id: 't' })).rejects.toThrow('unrecognised wrapped data key');
    await expect(ring.decryptDataKey(w.subarray(0, 60), { tenant_id: 't' })).rejects.toThrow('unrecognised wrapped data key');
    await expect(ring.decryptDataKey(Buffer.concat([w, Buffer.alloc(1)]), { tenant_id: 't' })).rejects.toThrow('unrecognised wrapped data key');
  });

  it('check() wraps and unwraps a probe key', async () => {
    await expect(localKeyring(randomBytes(32)).check()).resolves.toBeUndefined();
    // a master key that cannot wrap fails the check
    await expect(localKeyring(randomBytes(16)).check()).rejects.toThrow();
  });
});

describe('KMS adapter answers', () => {
  const kms = mockClient(KMSClient);
  afterAll(() => kms.restore());
  const provider = kmsKeyProvider(new KMSClient({ region: 'eu-west-1' }), 'key-1');

  it('is named kms', () => {
    expect(provider.name).toBe('kms');
  });

  it('GenerateDataKey without the plaintext or without the wrapped key is an error', async () => {
    for (const answer of [{ CiphertextBlob: Buffer.from('w') }, { Plaintext: Buffer.alloc(32) }, {}]) {
      kms.reset();
      kms.on(GenerateDataKeyCommand).resolves(answer);
      await expect(provider.generateDataKey({ tenant_id: 't' })).rejects.toThrow('KMS GenerateDataKey returned no key');
    }
    kms.reset();
    kms.on(GenerateDataKeyCommand).resolves({ Plaintext: Buffer.alloc(32, 1), CiphertextBlob: Buffer.from('w') });
    const dk = await provider.generateDataKey({ tenant_id: 't' });
    expect(Buffer.isBuffer(dk.plaintext)).toBe(true);
    expect(Buffer.from(dk.wrapped).toString()).toBe('w');
  });

  it('Decrypt without a plaintext is an error', async () => {
    kms.reset();
    kms.on(DecryptCommand).resolves({});
    await expect(provider.decryptDataKey(Buffer.from('w'), { tenant_id: 't' })).rejects.toThrow('KMS Decrypt returned no plaintext');
    kms.reset();
    kms.on(DecryptCommand).resolves({ Plaintext: new Uint8Array([1, 2]) });
    expect(Buffer.isBuffer(await provider.decryptDataKey(Buffer.from('w'), { tenant_id: 't' }))).toBe(true);
  });

  it('check: an enabled key passes; a key without metadata fails', async () => {
    kms.reset();
    kms.on(DescribeKeyCommand).resolves({ KeyMetadata: { KeyId: 'key-1', Enabled: true } });
    await expect(provider.check()).resolves.toBeUndefined();
    kms.reset();
    kms.on(DescribeKeyCommand).resolves({});
    await expect(provider.check()).rejects.toThrow('KMS key is not enabled');
  });
});

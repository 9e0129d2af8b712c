import { createHash, generateKeyPairSync } from 'node:crypto';
import { CreateKeyCommand, GetPublicKeyCommand, KMSClient, NotFoundException, ScheduleKeyDeletionCommand, SignCommand } from '@aws-sdk/client-kms';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, describe, expect, it } from 'vitest';
import type { HttpError } from '../../lib/core/errors.js';
import { algorithmsFor } from '../../lib/signing/algorithms.js';
import { BackendUnavailable, DeviceError, UnsupportedKeySpec } from '../../lib/signing/backend.js';
import { signingError } from '../../lib/signing/errors.js';
import { KeySpecField } from '../../lib/signing/keys.js';
import { KmsSigningBackend } from '../../lib/signing/kms.js';
import { parsePin, pinResolver } from '../../lib/signing/registry.js';
import { MAX_MESSAGE_BYTES, decodeMessage } from '../../lib/signing/service.js';

const status = (fn: () => unknown): number => {
  try {
    fn();
  } catch (error) {
    return (error as HttpError).status;
  }
  return 200;
};

describe('sign message decoding (1 byte to 1 MiB after strict base64 decoding)', () => {
  it('accepts padded RFC 4648 base64 from 1 byte to exactly 1 MiB', () => {
    expect(decodeMessage('AA==')).toEqual(Buffer.from([0]));
    expect(decodeMessage(Buffer.alloc(MAX_MESSAGE_BYTES, 7).toString('base64')).length).toBe(1024 * 1024);
  });

  it('refuses an empty message, 1 MiB + 1 byte, and anything that is not base64', () => {
    expect(status(() => decodeMessage(''))).toBe(400);
    expect(status(() => decodeMessage(Buffer.alloc(MAX_MESSAGE_BYTES + 1).toString('base64')))).toBe(400);
    for (const bad of ['not base64!', 'AAA', 'AA=A', 'A===', 'AA==AA==', '-_8=', ' AAAA', 'AAAA\n'])
      expect(
        status(() => decodeMessage(bad)),
        bad,
      ).toBe(400);
  });
});

describe('key specs and algorithms', () => {
  it('normalises key spec spellings and refuses unknown ones', () => {
    for (const [input, spec] of [
      ['EC_P256', 'EC_P256'],
      ['ecdsa-p256', 'EC_P256'],
      ['P-384', 'EC_P384'],
      ['Ed25519', 'ED25519'],
      ['rsa-3072', 'RSA_3072'],
      ['RSA_4096', 'RSA_4096'],
    ]) {
      expect(KeySpecField.parse(input)).toBe(spec);
    }
    for (const bad of ['RSA_1024', 'P-521', 'secp256k1', 42]) expect(KeySpecField.safeParse(bad).success).toBe(false);
  });

  it('chooses the mechanism from the key: one algorithm per EC/Ed25519 spec, PKCS#1 v1.5 (default) or PSS for RSA', () => {
    expect(algorithmsFor('EC_P256')).toEqual(['ECDSA_P256_SHA256']);
    expect(algorithmsFor('EC_P384')).toEqual(['ECDSA_P384_SHA384']);
    expect(algorithmsFor('ED25519')).toEqual(['ED25519']);
    expect(algorithmsFor('RSA_2048')).toEqual(['RSA_PKCS1_SHA256', 'RSA_PSS_SHA256']);
  });
});

describe('backend failures map to the spec statuses', () => {
  it('device failure → 502 device_error without the device message; unavailable → 503 with the reason; unsupported spec → 400', () => {
    const e502 = signingError(new DeviceError('pkcs11', 'sign failed: CKR_DEVICE_REMOVED'));
    expect([e502.status, e502.code]).toEqual([502, 'device_error']);
    expect(e502.message).not.toContain('CKR_');
    const e503 = signingError(new BackendUnavailable('pkcs11', 'install SoftHSM2 (sudo apt-get install softhsm2)'));
    expect([e503.status, e503.code, e503.expose]).toEqual([503, 'service_unavailable', true]);
    expect(e503.message).toContain('apt-get install softhsm2');
    expect(signingError(new UnsupportedKeySpec('kms', 'ED25519', 'no')).status).toBe(400);
    expect(signingError(new Error('boom')).status).toBe(500);
  });
});

describe('kms backend (mocked: no KMS engine here) sends exactly these requests', () => {
  const kms = mockClient(KMSClient);
  // the unit tier shares module state between files (isolate: false): leave KMSClient as found
  afterAll(() => kms.restore());
  const arn = 'arn:aws:kms:eu-west-1:111122223333:key/0b1c2d3e-1111-2222-3333-444455556666';
  const backend = new KmsSigningBackend({ enabled: true, client: () => new KMSClient({ region: 'eu-west-1' }) });
  const message = Buffer.from('release-1.2.3.tar.gz contents');

  it('Sign: the SHA-256 digest of the message as a DIGEST with ECDSA_SHA_256 under the key ARN; the DER signature comes back', async () => {
    kms.reset();
    kms.on(SignCommand).resolves({ Signature: Buffer.from('3006020101020101', 'hex'), KeyId: arn, SigningAlgorithm: 'ECDSA_SHA_256' });
    const sig = await backend.sign({ handle: arn }, 'ECDSA_P256_SHA256', message);
    expect(kms.commandCalls(SignCommand)).toHaveLength(1);
    expect(kms.commandCalls(SignCommand)[0]!.args[0].input).toEqual({
      KeyId: arn,
      Message: createHash('sha256').update(message).digest(),
      MessageType: 'DIGEST',
      SigningAlgorithm: 'ECDSA_SHA_256',
    });
    expect(sig.toString('hex')).toBe('3006020101020101');
  });

  it('Sign: P-384 hashes with SHA-384; RSA keys use RSASSA_PKCS1_V1_5_SHA_256 or RSASSA_PSS_SHA_256', async () => {
    kms.reset();
    kms.on(SignCommand).resolves({ Signature: Buffer.from([1]) });
    await backend.sign({ handle: arn }, 'ECDSA_P384_SHA384', message);
    await backend.sign({ handle: arn }, 'RSA_PKCS1_SHA256', message);
    await backend.sign({ handle: arn }, 'RSA_PSS_SHA256', message);
    expect(kms.commandCalls(SignCommand).map((c) => c.args[0].input)).toEqual([
      { KeyId: arn, Message: createHash('sha384').update(message).digest(), MessageType: 'DIGEST', SigningAlgorithm: 'ECDSA_SHA_384' },
      { KeyId: arn, Message: createHash('sha256').update(message).digest(), MessageType: 'DIGEST', SigningAlgorithm: 'RSASSA_PKCS1_V1_5_SHA_256' },
      { KeyId: arn, Message: createHash('sha256').update(message).digest(), MessageType: 'DIGEST', SigningAlgorithm: 'RSASSA_PSS_SHA_256' },
    ]);
  });

  it('a KMS failure is a device error (502), sent once and never retried by the backend', async () => {
    kms.reset();
    kms.on(SignCommand).rejects(new NotFoundException({ message: 'key gone', $metadata: {} }));
    const error = await backend.sign({ handle: arn }, 'ECDSA_P256_SHA256', message).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeviceError);
    expect(signingError(error).status).toBe(502);
    expect(kms.commandCalls(SignCommand)).toHaveLength(1);
  });

  it('CreateKey: SIGN_VERIFY with the KMS key spec, tagged with account and key id; then GetPublicKey of the new ARN', async () => {
    kms.reset();
    const spki = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'der' });
    kms.on(CreateKeyCommand).resolves({ KeyMetadata: { KeyId: 'k', Arn: arn } });
    kms.on(GetPublicKeyCommand).resolves({ PublicKey: spki, KeySpec: 'ECC_NIST_P256' });
    const out = await backend.generateKey('EC_P256', { tenantId: 'tenant-1', keyId: 'key-1' });
    expect(kms.commandCalls(CreateKeyCommand)[0]!.args[0].input).toEqual({
      KeySpec: 'ECC_NIST_P256',
      KeyUsage: 'SIGN_VERIFY',
      Description: 'secrets-api signing key tenant-1/key-1',
      Tags: [
        { TagKey: 'tenant_id', TagValue: 'tenant-1' },
        { TagKey: 'key_id', TagValue: 'key-1' },
      ],
    });
    expect(kms.commandCalls(GetPublicKeyCommand)[0]!.args[0].input).toEqual({ KeyId: arn });
    expect(out).toEqual({ ref: { handle: arn }, spki: Buffer.from(spki) });
  });

  it('destroyKey schedules deletion with the 7-day minimum window; Ed25519 is not a KMS key spec here (400)', async () => {
    kms.reset();
    kms.on(ScheduleKeyDeletionCommand).resolves({});
    await backend.destroyKey({ handle: arn });
    expect(kms.commandCalls(ScheduleKeyDeletionCommand)[0]!.args[0].input).toEqual({ KeyId: arn, PendingWindowInDays: 7 });
    const e = await backend.generateKey('ED25519', { tenantId: 't', keyId: 'k' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(UnsupportedKeySpec);
    expect(kms.commandCalls(CreateKeyCommand)).toHaveLength(0);
  });

  it('locally (not enabled) it reports unavailable and refuses without calling KMS (503)', async () => {
    kms.reset();
    const local = new KmsSigningBackend({ enabled: false, client: () => new KMSClient({ region: 'eu-west-1' }) });
    expect(await local.status()).toMatchObject({ name: 'kms', configured: false, reachable: false, status: 'unavailable' });
    const e = await local.sign({ handle: arn }, 'ECDSA_P256_SHA256', message).catch((x: unknown) => x);
    expect(signingError(e).status).toBe(503);
    expect(kms.calls()).toHaveLength(0);
  });
});

describe('PKCS#11 crypto-user credentials', () => {
  const sm = mockClient(SecretsManagerClient);
  afterAll(() => sm.restore());

  it('read from Secrets Manager by secret id; CloudHSM {username, password} becomes <user>:<password>', async () => {
    sm.reset();
    sm.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify({ username: 'crypto_user', password: 'pw-1' }) });
    const pin = await pinResolver(
      { PKCS11_PIN: undefined, PKCS11_PIN_SECRET_ID: 'prod/cloudhsm/cu', AWS_REGION: 'eu-west-1' },
      new SecretsManagerClient({ region: 'eu-west-1' }),
    )();
    expect(pin).toBe('crypto_user:pw-1');
    expect(sm.commandCalls(GetSecretValueCommand)[0]!.args[0].input).toEqual({ SecretId: 'prod/cloudhsm/cu' });
  });

  it('PKCS11_PIN from the environment wins and makes no call; secret formats', async () => {
    sm.reset();
    expect(
      await pinResolver(
        { PKCS11_PIN: '1234', PKCS11_PIN_SECRET_ID: 'x', AWS_REGION: 'eu-west-1' },
        new SecretsManagerClient({ region: 'eu-west-1' }),
      )(),
    ).toBe('1234');
    expect(sm.calls()).toHaveLength(0);
    expect(parsePin(' plain-pin ')).toBe('plain-pin');
    expect(parsePin('{"pin":"9876"}')).toBe('9876');
    expect(() => parsePin('{"username":"u"}')).toThrow();
    expect(() => parsePin('')).toThrow();
  });
});

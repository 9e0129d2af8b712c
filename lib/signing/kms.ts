import { createHash } from 'node:crypto';
import {
  CreateKeyCommand,
  GetPublicKeyCommand,
  ScheduleKeyDeletionCommand,
  SignCommand,
  type KMSClient,
  type KeySpec as KmsKeySpec,
  type SigningAlgorithmSpec,
} from '@aws-sdk/client-kms';
import { ALGORITHMS, type KeySpec, type SigningAlgorithm } from './algorithms.js';
import {
  BackendUnavailable,
  DeviceError,
  UnsupportedKeySpec,
  type BackendStatus,
  type GeneratedKey,
  type KeyRef,
  type SigningBackend,
} from './backend.js';

/**
 * The `kms` signing backend: AWS KMS asymmetric keys (KeyUsage SIGN_VERIFY). The message
 * is hashed in process and sent as a DIGEST, so a 1 MiB message costs one small request
 * (KMS accepts at most 4 KiB of RAW message). KMS returns ECDSA signatures DER-encoded
 * and uses a salt of the digest length for PSS: the same encodings as the pkcs11 backend.
 * Available in AWS deployments only; the local runtime has no KMS engine.
 */
const KEY_SPECS: Partial<Record<KeySpec, KmsKeySpec>> = {
  EC_P256: 'ECC_NIST_P256',
  EC_P384: 'ECC_NIST_P384',
  RSA_2048: 'RSA_2048',
  RSA_3072: 'RSA_3072',
  RSA_4096: 'RSA_4096',
};

const SIGNING: Partial<Record<SigningAlgorithm, SigningAlgorithmSpec>> = {
  ECDSA_P256_SHA256: 'ECDSA_SHA_256',
  ECDSA_P384_SHA384: 'ECDSA_SHA_384',
  RSA_PKCS1_SHA256: 'RSASSA_PKCS1_V1_5_SHA_256',
  RSA_PSS_SHA256: 'RSASSA_PSS_SHA_256',
};

/** KMS keeps a deleted key this many days before it is gone (7 is KMS's minimum). */
const KMS_DELETION_WINDOW_DAYS = 7;

interface KmsBackendOptions {
  readonly enabled: boolean;
  readonly client: () => Pick<KMSClient, 'send'>;
  readonly unavailableReason?: string;
}

export class KmsSigningBackend implements SigningBackend {
  readonly name = 'kms';

  constructor(private readonly opts: KmsBackendOptions) {}

  async status(): Promise<BackendStatus> {
    const base = {
      name: this.name,
      key_specs: Object.keys(KEY_SPECS) as KeySpec[],
      algorithms: Object.keys(SIGNING) as SigningAlgorithm[],
    };
    if (!this.opts.enabled) return { ...base, configured: false, reachable: false, status: 'unavailable', reason: this.reason() };
    // KMS is a regional service: nothing to probe without a key (each sign reports its own failure).
    return { ...base, configured: true, reachable: true, status: 'available' };
  }

  async generateKey(spec: KeySpec, label: { tenantId: string; keyId: string }): Promise<GeneratedKey> {
    const kmsSpec = KEY_SPECS[spec];
    if (!kmsSpec) throw new UnsupportedKeySpec(this.name, spec, 'AWS KMS has no such asymmetric key spec here');
    const client = this.client();
    try {
      const created = await client.send(
        new CreateKeyCommand({
          KeySpec: kmsSpec,
          KeyUsage: 'SIGN_VERIFY',
          Description: `secrets-api signing key ${label.tenantId}/${label.keyId}`,
          Tags: [
            { TagKey: 'tenant_id', TagValue: label.tenantId },
            { TagKey: 'key_id', TagValue: label.keyId },
          ],
        }),
      );
      const arn = created.KeyMetadata?.Arn;
      if (!arn) throw new Error('CreateKey returned no key ARN');
      const pub = await client.send(new GetPublicKeyCommand({ KeyId: arn }));
      if (!pub.PublicKey) throw new Error('GetPublicKey returned no key');
      return { ref: { handle: arn }, spki: Buffer.from(pub.PublicKey) };
    } catch (error) {
      throw new DeviceError(this.name, `key generation failed: ${(error as Error).name}`, { cause: error, code: (error as Error).name });
    }
  }

  async sign(ref: KeyRef, algorithm: SigningAlgorithm, message: Buffer): Promise<Buffer> {
    const spec = SIGNING[algorithm];
    if (!spec) throw new DeviceError(this.name, `AWS KMS cannot sign with ${algorithm}`, { code: 'unsupported' });
    const digest = createHash(ALGORITHMS[algorithm].nodeHash ?? 'sha256')
      .update(message)
      .digest();
    const client = this.client();
    try {
      const out = await client.send(new SignCommand({ KeyId: ref.handle, Message: digest, MessageType: 'DIGEST', SigningAlgorithm: spec }));
      if (!out.Signature) throw new Error('Sign returned no signature');
      return Buffer.from(out.Signature);
    } catch (error) {
      throw new DeviceError(this.name, `sign failed: ${(error as Error).name}`, { cause: error, code: (error as Error).name });
    }
  }

  async destroyKey(ref: KeyRef): Promise<void> {
    const client = this.client();
    try {
      await client.send(new ScheduleKeyDeletionCommand({ KeyId: ref.handle, PendingWindowInDays: KMS_DELETION_WINDOW_DAYS }));
    } catch (error) {
      throw new DeviceError(this.name, `key deletion failed: ${(error as Error).name}`, { cause: error, code: (error as Error).name });
    }
  }

  private reason(): string {
    return this.opts.unavailableReason ?? 'AWS KMS signing is available in AWS deployments only (KEY_PROVIDER=kms or SIGNING_KMS_ENABLED=1)';
  }

  private client(): Pick<KMSClient, 'send'> {
    if (!this.opts.enabled) throw new BackendUnavailable(this.name, this.reason());
    return this.opts.client();
  }
}

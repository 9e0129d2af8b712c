import { DecryptCommand, DescribeKeyCommand, GenerateDataKeyCommand, type KMSClient } from '@aws-sdk/client-kms';
import type { KeyProvider } from './provider.js';

/**
 * AWS KMS adapter: GenerateDataKey (AES_256) and Decrypt, both with the encryption
 * context, so CloudTrail shows which tenant each data key belongs to and a wrapped key
 * cannot be opened under another tenant's context.
 */
export function kmsKeyProvider(client: Pick<KMSClient, 'send'>, keyId: string): KeyProvider {
  return {
    name: 'kms',
    async generateDataKey(context) {
      const out = await client.send(
        new GenerateDataKeyCommand({ KeyId: keyId, KeySpec: 'AES_256', EncryptionContext: context }),
      );
      if (!out.Plaintext || !out.CiphertextBlob) throw new Error('KMS GenerateDataKey returned no key');
      return { plaintext: Buffer.from(out.Plaintext), wrapped: out.CiphertextBlob };
    },
    async decryptDataKey(wrapped, context) {
      const out = await client.send(
        new DecryptCommand({ KeyId: keyId, CiphertextBlob: wrapped, EncryptionContext: context }),
      );
      if (!out.Plaintext) throw new Error('KMS Decrypt returned no plaintext');
      return Buffer.from(out.Plaintext);
    },
    async check() {
      const out = await client.send(new DescribeKeyCommand({ KeyId: keyId }));
      if (out.KeyMetadata?.Enabled !== true) throw new Error('KMS key is not enabled');
    },
  };
}

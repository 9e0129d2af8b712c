import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync, chmodSync } from 'node:fs';
import { dirname } from 'node:path';
import type { DataKey, KeyProvider } from './provider.js';

const VERSION = 1;

/** Canonical form of an encryption context, used as AAD so a wrap opens only in its context. */
export const contextAad = (context: Record<string, string>): Buffer =>
  Buffer.from(JSON.stringify(Object.keys(context).sort().map((k) => [k, context[k]])));

/**
 * The local keyring: a 256-bit master key in a file created on first run (mode 0600)
 * wraps data keys with AES-256-GCM, the encryption context as additional data. Wrapped
 * form: version(1) | iv(12) | tag(16) | ciphertext(32).
 */
export function loadMasterKey(file: string): Buffer {
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(file, randomBytes(32), { mode: 0o600, flag: 'wx' });
  }
  chmodSync(file, 0o600);
  const key = readFileSync(file);
  if (key.length !== 32) throw new Error(`master key file ${file} must hold exactly 32 bytes`);
  return key;
}

export function localKeyring(masterKey: Buffer): KeyProvider {
  const wrap = (plaintext: Buffer, context: Record<string, string>): Uint8Array => {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', masterKey, iv);
    cipher.setAAD(contextAad(context));
    const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), ct]);
  };
  return {
    name: 'local',
    async generateDataKey(context) {
      const plaintext = randomBytes(32);
      return { plaintext, wrapped: wrap(plaintext, context) } satisfies DataKey;
    },
    async decryptDataKey(wrapped, context) {
      const buf = Buffer.from(wrapped);
      if (buf[0] !== VERSION || buf.length !== 1 + 12 + 16 + 32) throw new Error('unrecognised wrapped data key');
      const decipher = createDecipheriv('aes-256-gcm', masterKey, buf.subarray(1, 13));
      decipher.setAAD(contextAad(context));
      decipher.setAuthTag(buf.subarray(13, 29));
      return Buffer.concat([decipher.update(buf.subarray(29)), decipher.final()]);
    },
    async check() {
      const probe = { purpose: 'readiness' };
      const key = await this.generateDataKey(probe);
      await this.decryptDataKey(key.wrapped, probe);
    },
  };
}

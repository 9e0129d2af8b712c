import { execFileSync } from 'node:child_process';
import { createCipheriv, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, inject } from 'vitest';
import { scanTable } from '../helpers/leaks.js';

/** Helpers of the typed-credential tests (credentials*.test.ts, passwords*, tokens*). */

/** A key pair and a self-signed certificate made by the openssl CLI (PEM). */
export function opensslCert(cn: string, key: 'rsa' | 'ec' = 'rsa', extra: string[] = []): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'cred-test-'));
  try {
    const newkey = key === 'rsa' ? ['-newkey', 'rsa:2048'] : ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'];
    execFileSync(
      'openssl',
      ['req', '-x509', ...newkey, '-nodes', '-keyout', join(dir, 'k.pem'), '-out', join(dir, 'c.pem'), '-subj', `/CN=${cn}`, '-days', '30', ...extra],
      { stdio: 'pipe' },
    );
    return { key: readFileSync(join(dir, 'k.pem'), 'utf8'), cert: readFileSync(join(dir, 'c.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The base64 body of a PEM block: what would show if the key were stored in plaintext. */
export const pemBody = (pem: string) =>
  pem
    .replace(/-----[A-Z ]+-----/g, '')
    .replace(/\s+/g, '')
    .slice(20, 80);

/**
 * Values that are not canaries (base32 seeds, hex keys, PEM keys, tokens) must not appear in
 * the table or the server log in plaintext either: searched here explicitly.
 */
export async function expectNotStored(values: readonly string[]): Promise<void> {
  const items = await scanTable(inject('dynamoEndpoint'), inject('tableName'));
  const text = JSON.stringify(items, (_k, v: unknown) =>
    v instanceof Uint8Array ? `${Buffer.from(v).toString('latin1')} ${Buffer.from(v).toString('utf8')}` : v,
  );
  await new Promise((r) => setTimeout(r, 100));
  const log = readFileSync(inject('logFile'), 'utf8');
  for (const v of values) {
    expect(text.includes(v), `stored in plaintext: ${v.slice(0, 12)}…`).toBe(false);
    expect(log.includes(v), `logged: ${v.slice(0, 12)}…`).toBe(false);
  }
}

// ---- a YubiKey's OTP, made the way the device makes it -----------------------------------

const MODHEX = 'cbdefghijklnrtuv';
export const toModhex = (b: Buffer) => [...b.toString('hex')].map((c) => MODHEX[parseInt(c, 16)]).join('');

function crc16(data: Buffer): number {
  let crc = 0xffff;
  for (const byte of data) {
    crc ^= byte;
    for (let i = 0; i < 8; i++) crc = crc & 1 ? (crc >>> 1) ^ 0x8408 : crc >>> 1;
  }
  return crc;
}

export interface YubiKeyDevice {
  publicId: string;
  privateId: Buffer;
  aesKey: Buffer;
  otp(usage: number, session: number): string;
}

export function yubikeyDevice(): YubiKeyDevice {
  const publicId = toModhex(randomBytes(6));
  const privateId = randomBytes(6);
  const aesKey = randomBytes(16);
  return {
    publicId,
    privateId,
    aesKey,
    otp(usage, session) {
      const block = Buffer.alloc(16);
      privateId.copy(block, 0);
      block.writeUInt16LE(usage, 6);
      block.writeUIntLE(randomBytes(3).readUIntLE(0, 3), 8, 3);
      block[11] = session;
      randomBytes(2).copy(block, 12);
      block.writeUInt16LE(~crc16(block.subarray(0, 14)) & 0xffff, 14);
      const cipher = createCipheriv('aes-128-ecb', aesKey, null).setAutoPadding(false);
      return publicId + toModhex(Buffer.concat([cipher.update(block), cipher.final()]));
    },
  };
}

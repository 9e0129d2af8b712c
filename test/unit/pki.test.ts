import { generateKeyPairSync } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { describe, expect, it } from 'vitest';
import { thresholdFor } from '../../lib/events/expiry.js';
import { minisignKeyIdHex, minisignKeys } from '../../lib/pki/minisign.js';
import { derInteger } from '../../lib/pki/x509.js';

describe('minisign format', () => {
  // The minisign project's own public key and a signature made by the minisign tool
  // (published in the py-minisign README): checks the reading of the format the API tests rely on.
  const PUBLIC = 'RWQf6LRCGA9i53mlYecO4IzT51TGPpvWucNSCh1CBM0QTaLn73Y7GFO3';
  const SIG = 'RWQf6LRCGA9i59SLOFxz6NxvASXDJeRtuZykwQepbDEGt87ig1BNpWaVWuNrm73YiIiJbq71Wi+dP9eKL8OC351vwIasSSbXxwA=';
  const TRUSTED = 'timestamp:1555779966\tfile:test';
  const GLOBAL = 'QtKMXWyYcwdpZAlPF7tE2ENJkRd1ujvKjlj1m9RtHTBnZPa5WKU5uWRs5GoP5M/VqE81QFuMKI5k/SfNQUaOAA==';

  it('reads a real minisign public key and verifies a real minisign signature', () => {
    const pk = Buffer.from(PUBLIC, 'base64');
    expect(pk.subarray(0, 2).toString()).toBe('Ed');
    expect(minisignKeyIdHex(pk.subarray(2, 10))).toBe('E7620F1842B4E81F');
    const sig = Buffer.from(SIG, 'base64');
    expect(sig.subarray(2, 10)).toEqual(pk.subarray(2, 10));
    expect(ed25519.verify(sig.subarray(10), Buffer.from('test'), pk.subarray(10))).toBe(true);
    expect(ed25519.verify(Buffer.from(GLOBAL, 'base64'), Buffer.concat([sig.subarray(10), Buffer.from(TRUSTED)]), pk.subarray(10))).toBe(true);
  });

  it('writes the public key file and the secret key under the same key id', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const id = Buffer.from('0102030405060708', 'hex');
    const keys = minisignKeys(privateKey, id, 'c');
    expect(keys.key_id).toBe('0807060504030201');
    expect(keys.public_key_file.split('\n')[0]).toBe('untrusted comment: minisign public key 0807060504030201');
    const pk = Buffer.from(keys.public_key, 'base64');
    expect(pk.subarray(10).toString('base64url')).toBe(publicKey.export({ format: 'jwk' }).x);
    const sk = Buffer.from(keys.secret_key_file.split('\n')[1]!, 'base64');
    expect(sk.subarray(54, 62)).toEqual(id);
    expect(sk.subarray(94, 126)).toEqual(pk.subarray(10));
  });
});

describe('helpers', () => {
  it('DER INTEGER encoding (CRL numbers) is minimal and positive', () => {
    expect(Buffer.from(derInteger(0n)).toString('hex')).toBe('020100');
    expect(Buffer.from(derInteger(127n)).toString('hex')).toBe('02017f');
    expect(Buffer.from(derInteger(128n)).toString('hex')).toBe('02020080');
    expect(Buffer.from(derInteger(0x1234n)).toString('hex')).toBe('02021234');
  });

  it('expiry thresholds: the smallest threshold the remaining time is within', () => {
    const notAfter = new Date('2030-01-31T00:00:00Z');
    const at = (days: number) => new Date(notAfter.getTime() - days * 86400_000);
    expect(thresholdFor(notAfter, at(31), [30, 7, 1])).toBeUndefined();
    expect(thresholdFor(notAfter, at(30), [30, 7, 1])).toBe(30);
    expect(thresholdFor(notAfter, at(8), [1, 30, 7])).toBe(30);
    expect(thresholdFor(notAfter, at(7), [30, 7, 1])).toBe(7);
    expect(thresholdFor(notAfter, at(0.5), [30, 7, 1])).toBe(1);
    expect(thresholdFor(notAfter, at(-1), [30, 7, 1])).toBeUndefined();
  });
});

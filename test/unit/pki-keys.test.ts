import { createPrivateKey, generateKeyPairSync, type JsonWebKey, type KeyObject } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { assertPrivateKeyConsistent, parsePrivateKeyPem } from '../../lib/pki/keys.js';

/**
 * lib/pki/keys.ts assertPrivateKeyConsistent: each inconsistency of an RSA key's numbers
 * (RFC 8017 §3.2) and of an EC key's public point is refused with its own sentence;
 * consistent keys of every supported type pass.
 */
const fromB64 = (s: string) => BigInt(`0x${Buffer.from(s, 'base64url').toString('hex')}`);
const toB64 = (n: bigint, bytes: number) => Buffer.from(n.toString(16).padStart(bytes * 2, '0'), 'hex').toString('base64url');
const fromJwk = (jwk: JsonWebKey): KeyObject => createPrivateKey({ key: jwk, format: 'jwk' });
const message = (f: () => void) => {
  try {
    f();
    return 'passed';
  } catch (error) {
    return (error as Error).message.replace(
      /^the private key is inconsistent: | \(openssl pkey -check refuses it too\); export it again from its source$/g,
      '',
    );
  }
};

describe('assertPrivateKeyConsistent', () => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }) as Required<
    Pick<JsonWebKey, 'n' | 'e' | 'd' | 'p' | 'q' | 'dp' | 'dq' | 'qi'>
  > &
    JsonWebKey;
  const bump = (v: string, by = 2n) => toB64(fromB64(v) + by, Buffer.from(v, 'base64url').length);

  it('consistent keys of every supported type pass', () => {
    expect(message(() => assertPrivateKeyConsistent(fromJwk(rsa)))).toBe('passed');
    for (const namedCurve of ['P-256', 'P-384', 'P-521'])
      expect(message(() => assertPrivateKeyConsistent(generateKeyPairSync('ec', { namedCurve }).privateKey))).toBe('passed');
    expect(message(() => assertPrivateKeyConsistent(generateKeyPairSync('ed25519').privateKey))).toBe('passed');
    expect(message(() => assertPrivateKeyConsistent(generateKeyPairSync('x25519').privateKey))).toBe('passed');
  });

  it('RSA: each broken relation is named', () => {
    expect(message(() => assertPrivateKeyConsistent(fromJwk({ ...rsa, d: bump(rsa.d) })))).toBe('d·e is not congruent to 1 modulo λ(n)');
    expect(message(() => assertPrivateKeyConsistent(fromJwk({ ...rsa, dp: bump(rsa.dp) })))).toBe('the CRT exponents dP, dQ do not match d');
    expect(message(() => assertPrivateKeyConsistent(fromJwk({ ...rsa, dq: bump(rsa.dq) })))).toBe('the CRT exponents dP, dQ do not match d');
    expect(message(() => assertPrivateKeyConsistent(fromJwk({ ...rsa, qi: bump(rsa.qi, 1n) })))).toBe(
      'the CRT coefficient qInv is not the inverse of q modulo p',
    );
    expect(message(() => assertPrivateKeyConsistent(fromJwk({ ...rsa, p: bump(rsa.p) })))).toBe('n is not the product of p and q');
    // p and q swapped for composite factors of n: n = (p·q)·1
    const n = fromB64(rsa.n);
    expect(message(() => assertPrivateKeyConsistent(fromJwk({ ...rsa, p: rsa.n, q: toB64(1n, 1), dp: toB64(fromB64(rsa.d) % (n - 1n), 256) })))).toBe(
      'p or q is not prime',
    );
  });

  it('EC: a public point of another scalar is refused', () => {
    const one = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({ format: 'jwk' });
    const two = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({ format: 'jwk' });
    expect(message(() => assertPrivateKeyConsistent(fromJwk({ ...one, d: two.d })))).toBe('the public point does not match the private scalar');
  });

  it('parsePrivateKeyPem runs the check (400 invalid_key)', () => {
    const pem = fromJwk({ ...rsa, d: bump(rsa.d) }).export({ type: 'pkcs8', format: 'pem' }) as string;
    expect(() => parsePrivateKeyPem(pem)).toThrow(expect.objectContaining({ status: 400, code: 'invalid_key' }));
  });
});

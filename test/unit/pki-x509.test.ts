import { generateKeyPairSync, webcrypto } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { HttpError } from '../../lib/core/errors.js';
import { dnEscape, keyUsageNames, parseCertificates, sanExtension, sansOf, signingAlgorithm, toPublicCryptoKey, toSigningKey, usagesOf, x509 } from '../../lib/pki/x509.js';

/** lib/pki/x509.ts: the algorithm each key type signs with, subject alternative names both ways, usages by name, DN escaping. */
const ec = (namedCurve: string) => generateKeyPairSync('ec', { namedCurve });

describe('keys in certificates', () => {
  it('the signature algorithm follows the key: RSA and EC sized to the curve, Ed25519; others refused', () => {
    expect(signingAlgorithm(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey)).toEqual({ name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' });
    expect(signingAlgorithm(ec('prime256v1').privateKey)).toEqual({ name: 'ECDSA', hash: 'SHA-256' });
    expect(signingAlgorithm(ec('secp384r1').privateKey)).toEqual({ name: 'ECDSA', hash: 'SHA-384' });
    expect(signingAlgorithm(ec('secp521r1').privateKey)).toEqual({ name: 'ECDSA', hash: 'SHA-512' });
    expect(signingAlgorithm(generateKeyPairSync('ed25519').privateKey)).toEqual({ name: 'Ed25519' });
    const x = generateKeyPairSync('x25519').privateKey;
    expect(() => signingAlgorithm(x)).toThrow(HttpError);
    expect(() => signingAlgorithm(x)).toThrow('a x25519 key cannot sign certificates');
  });

  it('keys import into WebCrypto with their own curve; unsupported types are refused', async () => {
    for (const [curve, name] of [['prime256v1', 'P-256'], ['secp384r1', 'P-384'], ['secp521r1', 'P-521']] as const) {
      const { publicKey, privateKey } = ec(curve);
      expect(((await toPublicCryptoKey(publicKey)).algorithm as EcKeyAlgorithm).namedCurve).toBe(name);
      expect(((await toSigningKey(privateKey)).algorithm as EcKeyAlgorithm).namedCurve).toBe(name);
    }
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    expect((await toSigningKey(rsa.privateKey)).algorithm).toMatchObject({ name: 'RSASSA-PKCS1-v1_5', hash: { name: 'SHA-256' } });
    expect((await toPublicCryptoKey(generateKeyPairSync('ed25519').publicKey)).algorithm.name).toBe('Ed25519');
    await expect(toPublicCryptoKey(generateKeyPairSync('x25519').publicKey)).rejects.toThrow('x25519 keys are not supported in certificates');
  });
});

describe('subject alternative names', () => {
  it('every kind into the extension and back; none: no extension', async () => {
    const san = { dns: ['a.example', 'b.example'], ip: ['192.0.2.1', '2001:db8::1'], email: ['ops@example.com'], uri: ['https://example.com/x'] };
    const ext = sanExtension(san)!;
    expect(ext).toBeInstanceOf(x509.SubjectAlternativeNameExtension);
    expect(sansOf([ext])).toEqual(san);
    expect(sanExtension({})).toBeUndefined();
    expect(sanExtension({ dns: [], ip: [] })).toBeUndefined();
    expect(sansOf([])).toEqual({ dns: [], ip: [], email: [], uri: [] });
    // other name types are not listed
    const other = new x509.SubjectAlternativeNameExtension([{ type: 'dn', value: 'CN=x' }, { type: 'dns', value: 'c.example' }]);
    expect(sansOf([other])).toEqual({ dns: ['c.example'], ip: [], email: [], uri: [] });
  });
});

describe('usages and names', () => {
  it('key usage flags by name; a certificate without usage extensions has none; unknown EKUs by OID', async () => {
    expect(keyUsageNames(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyAgreement)).toEqual(['digital_signature', 'key_agreement']);
    expect(keyUsageNames(0)).toEqual([]);
    const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
    const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as CryptoKeyPair;
    const bare = await x509.X509CertificateGenerator.createSelfSigned({ serialNumber: '01', name: 'CN=bare', keys, signingAlgorithm: alg });
    expect(usagesOf(bare)).toEqual({ key_usage: [], extended_key_usage: [] });
    const used = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: '02',
      name: 'CN=used',
      keys,
      signingAlgorithm: alg,
      extensions: [new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyEncipherment), new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth, '1.2.3.4'])],
    });
    expect(usagesOf(used)).toEqual({ key_usage: ['key_encipherment'], extended_key_usage: ['server_auth', '1.2.3.4'] });
    expect(parseCertificates('no pem here')).toEqual([]);
    expect(parseCertificates(`${used.toString('pem')}\n${bare.toString('pem')}`).map((c) => c.subject)).toEqual(['CN=used', 'CN=bare']);
  });

  it('RFC 4514 escaping: specials anywhere, a leading space or #, a trailing space', () => {
    expect(dnEscape('a,b+c"d\\e<f>g;h=i')).toBe('a\\,b\\+c\\"d\\\\e\\<f\\>g\\;h\\=i');
    expect(dnEscape('#x')).toBe('\\#x');
    expect(dnEscape(' x ')).toBe('\\ x\\ ');
    expect(dnEscape('plain')).toBe('plain');
  });
});

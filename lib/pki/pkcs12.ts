import { createPrivateKey, randomBytes, webcrypto } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';

/**
 * THE PKCS#12 (RFC 7292) writer (JKS keystore exports, certificate and S/MIME downloads),
 * with PKI.js, for any number of private-key entries of any algorithm node:crypto holds
 * (RSA, EC, Ed25519: the key is PKCS#8 DER) and trusted-certificate entries, in the form
 * Java 17's keytool and OpenSSL 3 read:
 * every private key is a PKCS8ShroudedKeyBag, certificates are CertBags, the whole is
 * encrypted with PBES2 (PBKDF2-HMAC-SHA256, AES-256-CBC) and MACed with HMAC-SHA256 (the
 * defaults of Java 17 and OpenSSL 3). Aliases are friendlyName attributes; a private key and
 * its leaf certificate share a localKeyId; a trusted-certificate entry carries Java's
 * trusted-key-usage attribute (without it Java ignores certificates that have no key).
 */
export interface PrivateKeyEntry {
  readonly alias: string;
  /** DER of the PKCS#8 PrivateKeyInfo. */
  readonly privateKey: Uint8Array;
  /** DER certificates, leaf first. */
  readonly chain: readonly Uint8Array[];
}
interface TrustedCertEntry {
  readonly alias: string;
  readonly certificate: Uint8Array;
}

const OID = {
  friendlyName: '1.2.840.113549.1.9.20',
  localKeyId: '1.2.840.113549.1.9.21',
  certBag: '1.2.840.113549.1.12.10.1.3',
  shroudedKeyBag: '1.2.840.113549.1.12.10.1.2',
  /** Oracle's trustedKeyUsage: the certificate is a trust anchor (value: anyExtendedKeyUsage). */
  javaTrustedKeyUsage: '2.16.840.1.113894.746875.1.1',
  anyExtendedKeyUsage: '2.5.29.37.0',
};

const ITERATIONS = 10_000;

/** The PKCS#8 DER of a PEM private key, as entries take it. */
export const pkcs8Der = (pem: string): Uint8Array => createPrivateKey(pem).export({ type: 'pkcs8', format: 'der' });

let engineReady = false;
function engine(): void {
  if (engineReady) return;
  pkijs.setEngine('node', new pkijs.CryptoEngine({ name: 'node', crypto: webcrypto as unknown as Crypto }));
  engineReady = true;
}

const buf = (u: Uint8Array): ArrayBuffer => u.buffer.slice(u.byteOffset, u.byteOffset + u.byteLength) as ArrayBuffer;
const attr = (type: string, value: asn1js.BaseBlock) => new pkijs.Attribute({ type, values: [value] });
const alias = (name: string) => attr(OID.friendlyName, new asn1js.BmpString({ value: name }));
const keyId = (id: Uint8Array) => attr(OID.localKeyId, new asn1js.OctetString({ valueHex: buf(id) }));
const certBag = (der: Uint8Array, attributes?: pkijs.Attribute[]) =>
  new pkijs.SafeBag({
    bagId: OID.certBag,
    bagValue: new pkijs.CertBag({ parsedValue: pkijs.Certificate.fromBER(buf(der)) }),
    bagAttributes: attributes,
  });

export async function buildPkcs12(password: string, keys: readonly PrivateKeyEntry[], trusted: readonly TrustedCertEntry[]): Promise<Buffer> {
  engine();
  const pass = buf(new TextEncoder().encode(password));
  const encryption = {
    password: pass,
    contentEncryptionAlgorithm: { name: 'AES-CBC', length: 256 } as pkijs.ContentEncryptionAlgorithm,
    hmacHashAlgorithm: 'SHA-256',
    iterationCount: ITERATIONS,
  };

  const keyBags: pkijs.SafeBag[] = [];
  const certBags: pkijs.SafeBag[] = [];
  for (const entry of keys) {
    const id = randomBytes(20);
    const shrouded = new pkijs.PKCS8ShroudedKeyBag({ parsedValue: pkijs.PrivateKeyInfo.fromBER(buf(entry.privateKey)) });
    await shrouded.makeInternalValues(encryption);
    keyBags.push(new pkijs.SafeBag({ bagId: OID.shroudedKeyBag, bagValue: shrouded, bagAttributes: [alias(entry.alias), keyId(id)] }));
    entry.chain.forEach((der, i) => certBags.push(certBag(der, i === 0 ? [alias(entry.alias), keyId(id)] : undefined)));
  }
  for (const entry of trusted) {
    certBags.push(
      certBag(entry.certificate, [
        alias(entry.alias),
        attr(OID.javaTrustedKeyUsage, new asn1js.ObjectIdentifier({ value: OID.anyExtendedKeyUsage })),
      ]),
    );
  }

  const safeContents: { privacyMode: number; value: pkijs.SafeContents }[] = [];
  if (certBags.length > 0) safeContents.push({ privacyMode: 1, value: new pkijs.SafeContents({ safeBags: certBags }) });
  if (keyBags.length > 0) safeContents.push({ privacyMode: 0, value: new pkijs.SafeContents({ safeBags: keyBags }) });
  const pfx = new pkijs.PFX({ parsedValue: { integrityMode: 0, authenticatedSafe: new pkijs.AuthenticatedSafe({ parsedValue: { safeContents } }) } });
  await pfx.parsedValue!.authenticatedSafe!.makeInternalValues({ safeContents: safeContents.map((c) => (c.privacyMode === 1 ? encryption : {})) });
  await pfx.makeInternalValues({ password: pass, iterations: ITERATIONS, pbkdf2HashAlgorithm: 'SHA-256', hmacHashAlgorithm: 'SHA-256' });
  return Buffer.from(pfx.toSchema().toBER(false));
}

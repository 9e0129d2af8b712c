// @peculiar/x509 resolves its dependency container through the Reflect metadata API.
import 'reflect-metadata';
import { createHash, createPublicKey, webcrypto, type KeyObject } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { badRequest } from '../core/errors.js';

/**
 * X.509 with @peculiar/x509 on Node's WebCrypto: one place that sets the provider up and
 * converts between node:crypto KeyObjects (how keys are generated, stored and exported)
 * and WebCrypto CryptoKeys (what the certificate, CSR and CRL builders sign with).
 */
x509.cryptoProvider.set(webcrypto as unknown as Crypto);

export { x509 };

const subtle = webcrypto.subtle;

/** The signature algorithm a key signs certificates with (SHA-256 family sized to the key). */
export function signingAlgorithm(key: KeyObject): Algorithm | EcdsaParams | RsaHashedImportParams {
  const d = key.asymmetricKeyDetails ?? {};
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } as RsaHashedImportParams;
    case 'ec':
      return { name: 'ECDSA', hash: d.namedCurve === 'secp384r1' ? 'SHA-384' : d.namedCurve === 'secp521r1' ? 'SHA-512' : 'SHA-256' } as EcdsaParams;
    case 'ed25519':
      return { name: 'Ed25519' };
    default:
      throw badRequest(`a ${key.asymmetricKeyType} key cannot sign certificates`);
  }
}

function importAlgorithm(key: KeyObject): RsaHashedImportParams | EcKeyImportParams | Algorithm {
  const d = key.asymmetricKeyDetails ?? {};
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
    case 'ec':
      return {
        name: 'ECDSA',
        namedCurve: ({ prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521' } as Record<string, string>)[d.namedCurve ?? ''] ?? 'P-256',
      };
    case 'ed25519':
      return { name: 'Ed25519' };
    default:
      throw badRequest(`${key.asymmetricKeyType} keys are not supported in certificates`);
  }
}

/** A node private key as a WebCrypto signing key. */
export async function toSigningKey(privateKey: KeyObject): Promise<CryptoKey> {
  const der = privateKey.export({ type: 'pkcs8', format: 'der' });
  return (await subtle.importKey('pkcs8', der, importAlgorithm(privateKey), false, ['sign'])) as CryptoKey;
}

/** A node public key as a WebCrypto key (for the certificate's subject public key). */
export async function toPublicCryptoKey(publicKey: KeyObject): Promise<CryptoKey> {
  const der = publicKey.export({ type: 'spki', format: 'der' });
  return (await subtle.importKey('spki', der, importAlgorithm(publicKey), true, ['verify'])) as CryptoKey;
}

/** PEM with the label OpenSSL expects and a final newline. */
export function pem(der: ArrayBuffer | Uint8Array, label: string): string {
  const b64 = Buffer.from(der instanceof Uint8Array ? der : new Uint8Array(der)).toString('base64');
  return `-----BEGIN ${label}-----\n${b64.match(/.{1,64}/g)!.join('\n')}\n-----END ${label}-----\n`;
}

export const certPem = (c: x509.X509Certificate) => pem(c.rawData, 'CERTIFICATE');

/** Lower-case hex SHA-256 of DER bytes: the fingerprint of certificates and SPKI public keys. */
export const sha256Hex = (der: ArrayBuffer | Uint8Array | Buffer) =>
  createHash('sha256')
    .update(Buffer.from(der instanceof ArrayBuffer ? new Uint8Array(der) : der))
    .digest('hex');

/** The node public key of a certificate. */
export const certPublicKey = (c: x509.X509Certificate): KeyObject =>
  createPublicKey({ key: Buffer.from(c.publicKey.rawData), format: 'der', type: 'spki' });

/** Parses one PEM (or base64 DER) certificate; 400 with a clear message otherwise. */
function parseCertificate(text: string, what = 'certificate'): x509.X509Certificate {
  try {
    return new x509.X509Certificate(text.trim());
  } catch {
    throw badRequest(`${what} is not a valid PEM-encoded X.509 certificate`);
  }
}

/** Every certificate of a PEM bundle, in order. */
export function parseCertificates(text: string): x509.X509Certificate[] {
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((b) => parseCertificate(b));
}

/** DER INTEGER encoding of a non-negative bigint (CRL numbers). */
export function derInteger(n: bigint): Uint8Array<ArrayBuffer> {
  let hex = n.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  if (parseInt(hex.slice(0, 2), 16) & 0x80) hex = `00${hex}`;
  const body = Buffer.from(hex, 'hex');
  const out = new Uint8Array(new ArrayBuffer(2 + body.length));
  out.set([0x02, body.length]);
  out.set(body, 2);
  return out;
}

/** A random positive 128-bit serial number in hex (RFC 5280: at most 20 octets, unpredictable). */
export function randomSerial(): string {
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0]! & 0x7f) | 0x40; // positive, fixed length
  return Buffer.from(bytes).toString('hex');
}

export type SanInput = { dns?: string[]; ip?: string[]; email?: string[]; uri?: string[] };

export function sanExtension(san: SanInput): x509.SubjectAlternativeNameExtension | undefined {
  const names: x509.JsonGeneralName[] = [
    ...(san.dns ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(san.ip ?? []).map((value) => ({ type: 'ip' as const, value })),
    ...(san.email ?? []).map((value) => ({ type: 'email' as const, value })),
    ...(san.uri ?? []).map((value) => ({ type: 'url' as const, value })),
  ];
  return names.length > 0 ? new x509.SubjectAlternativeNameExtension(names) : undefined;
}

/** The SANs of a certificate or CSR as plain lists. */
export function sansOf(extensions: readonly x509.Extension[]): Required<SanInput> {
  const out: Required<SanInput> = { dns: [], ip: [], email: [], uri: [] };
  const ext = extensions.find((e) => e instanceof x509.SubjectAlternativeNameExtension) as x509.SubjectAlternativeNameExtension | undefined;
  for (const n of ext?.names.toJSON() ?? []) {
    if (n.type === 'dns') out.dns.push(n.value);
    else if (n.type === 'ip') out.ip.push(n.value);
    else if (n.type === 'email') out.email.push(n.value);
    else if (n.type === 'url') out.uri.push(n.value);
  }
  return out;
}

export const KEY_USAGES = {
  digital_signature: x509.KeyUsageFlags.digitalSignature,
  non_repudiation: x509.KeyUsageFlags.nonRepudiation,
  key_encipherment: x509.KeyUsageFlags.keyEncipherment,
  data_encipherment: x509.KeyUsageFlags.dataEncipherment,
  key_agreement: x509.KeyUsageFlags.keyAgreement,
} as const;
export type KeyUsageName = keyof typeof KEY_USAGES;

export const EXTENDED_KEY_USAGES = {
  server_auth: x509.ExtendedKeyUsage.serverAuth,
  client_auth: x509.ExtendedKeyUsage.clientAuth,
  code_signing: x509.ExtendedKeyUsage.codeSigning,
  email_protection: x509.ExtendedKeyUsage.emailProtection,
  time_stamping: x509.ExtendedKeyUsage.timeStamping,
} as const;
export type ExtendedKeyUsageName = keyof typeof EXTENDED_KEY_USAGES;

export const keyUsageNames = (flags: number): KeyUsageName[] =>
  (Object.entries(KEY_USAGES) as [KeyUsageName, number][]).filter(([, f]) => (flags & f) !== 0).map(([n]) => n);

/** Key usages and extended key usages of a certificate, by name. */
export function usagesOf(cert: x509.X509Certificate): { key_usage: KeyUsageName[]; extended_key_usage: string[] } {
  const ku = cert.getExtension(x509.KeyUsagesExtension);
  const eku = cert.getExtension(x509.ExtendedKeyUsageExtension);
  const ekuNames = Object.fromEntries(Object.entries(EXTENDED_KEY_USAGES).map(([k, v]) => [v, k]));
  return {
    key_usage: ku ? keyUsageNames(ku.usages) : [],
    extended_key_usage: (eku?.usages ?? []).map((u) => ekuNames[String(u)] ?? String(u)),
  };
}

/** Escapes a value for an RFC 4514 distinguished name string. */
export const dnEscape = (v: string) =>
  v
    .replace(/([,+"\\<>;=])/g, '\\$1')
    .replace(/^([ #])/, '\\$1')
    .replace(/ $/, '\\ ');

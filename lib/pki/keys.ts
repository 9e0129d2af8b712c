import { createPrivateKey, createPublicKey, generateKeyPair as generateKeyPairCb, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { badRequest } from '../http/errors.js';
import { sha256Hex } from './x509.js';

/**
 * Asymmetric keys with node:crypto: generation, PEM parsing with clear client errors, and
 * the few facts every key family records (algorithm, size or curve, SPKI fingerprint).
 */
const generateKeyPairAsync = promisify(generateKeyPairCb) as unknown as (
  type: string,
  options: Record<string, unknown>,
) => Promise<{ publicKey: KeyObject; privateKey: KeyObject }>;

type Curve = 'P-256' | 'P-384' | 'P-521';
export type KeySpec =
  | { readonly kind: 'rsa'; readonly bits: 2048 | 3072 | 4096 }
  | { readonly kind: 'ec'; readonly curve: Curve }
  | { readonly kind: 'ed25519' }
  | { readonly kind: 'x25519' };

export interface KeyPair {
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
}

const NODE_CURVES: Record<Curve, string> = { 'P-256': 'prime256v1', 'P-384': 'secp384r1', 'P-521': 'secp521r1' };
const CURVE_NAMES: Record<string, Curve> = { prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521' };

/** Generates off the event loop (RSA takes long enough to matter). */
export function generateKeyPair(spec: KeySpec): Promise<KeyPair> {
  switch (spec.kind) {
    case 'rsa':
      return generateKeyPairAsync('rsa', { modulusLength: spec.bits, publicExponent: 0x10001 });
    case 'ec':
      return generateKeyPairAsync('ec', { namedCurve: NODE_CURVES[spec.curve] });
    case 'ed25519':
      return generateKeyPairAsync('ed25519', {});
    case 'x25519':
      return generateKeyPairAsync('x25519', {});
  }
}

interface KeyFacts {
  /** RSA, EC, Ed25519, X25519 */
  readonly algorithm: 'RSA' | 'EC' | 'Ed25519' | 'X25519';
  readonly bits: number;
  readonly curve: Curve | null;
}

export function describeKey(key: KeyObject): KeyFacts {
  const d = key.asymmetricKeyDetails ?? {};
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return { algorithm: 'RSA', bits: d.modulusLength ?? 0, curve: null };
    case 'ec': {
      const curve = CURVE_NAMES[d.namedCurve ?? ''];
      if (!curve) throw badRequest(`unsupported elliptic curve ${d.namedCurve}: use P-256, P-384 or P-521`);
      return { algorithm: 'EC', bits: Number(curve.slice(2)), curve };
    }
    case 'ed25519':
      return { algorithm: 'Ed25519', bits: 256, curve: null };
    case 'x25519':
      return { algorithm: 'X25519', bits: 256, curve: null };
    default:
      throw badRequest(`unsupported key type ${key.asymmetricKeyType}: use RSA, EC (P-256, P-384, P-521) or Ed25519`);
  }
}

/** Lower-case hex SHA-256 of the DER SubjectPublicKeyInfo (as `openssl pkey -pubout -outform DER | sha256sum`). */
export const spkiFingerprint = (publicKey: KeyObject) => sha256Hex(publicKey.export({ type: 'spki', format: 'der' }));

export const privatePkcs8Pem = (k: KeyObject) => k.export({ type: 'pkcs8', format: 'pem' }) as string;
export const publicSpkiPem = (k: KeyObject) => k.export({ type: 'spki', format: 'pem' }) as string;

const errorCode = (e: unknown) => (e as { code?: string }).code ?? '';
const errorText = (e: unknown) => `${(e as Error).message ?? ''} ${errorCode(e)}`;

/**
 * Parses a PEM private key (PKCS#8, encrypted PKCS#8, PKCS#1 RSA, SEC1 EC). A corrupt
 * PEM, an encrypted key without a passphrase and a wrong passphrase are 400s that say which.
 */
export function parsePrivateKeyPem(text: string, passphrase?: string): KeyObject {
  if (!/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/.test(text))
    throw badRequest('not a PEM private key: expected a "-----BEGIN ... PRIVATE KEY-----" block', undefined, 'invalid_key');
  const encrypted = /-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: 4,ENCRYPTED/.test(text);
  if (encrypted && passphrase === undefined) throw badRequest('the private key is encrypted: send its passphrase', undefined, 'passphrase_required');
  try {
    return createPrivateKey({ key: text, format: 'pem', ...(passphrase !== undefined ? { passphrase } : {}) });
  } catch (error) {
    const msg = errorText(error);
    if (encrypted && /bad decrypt|decrypt|passphrase|DECODER routines::unsupported/i.test(msg)) {
      throw badRequest('wrong passphrase: the private key could not be decrypted', undefined, 'wrong_passphrase');
    }
    throw badRequest('the private key PEM is corrupt or of an unsupported type', undefined, 'invalid_key');
  }
}

/** Parses a PEM public key (SPKI or PKCS#1 RSA), or derives it from a certificate. */
export function parsePublicKeyPem(text: string): KeyObject {
  try {
    return createPublicKey({ key: text, format: 'pem' });
  } catch {
    throw badRequest('the public key PEM is corrupt or of an unsupported type', undefined, 'invalid_key');
  }
}

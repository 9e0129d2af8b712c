import {
  checkPrimeSync,
  createECDH,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  generateKeyPair as generateKeyPairCb,
  randomBytes,
  sign,
  verify,
  type JsonWebKey,
  type KeyObject,
} from 'node:crypto';
import { promisify } from 'node:util';
import { badRequest } from '../core/errors.js';
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

const inconsistent = (what: string) =>
  badRequest(
    `the private key is inconsistent: ${what} (openssl pkey -check refuses it too); export it again from its source`,
    undefined,
    'invalid_key',
  );

const big = (b64url: string | undefined) => BigInt(`0x${Buffer.from(b64url ?? '', 'base64url').toString('hex') || '0'}`);
const gcd = (a: bigint, b: bigint): bigint => {
  while (b) [a, b] = [b, a % b];
  return a;
};

/** The RSA key's own numbers agree (what OpenSSL's RSA_check_key tests): n = p·q, both prime, d·e ≡ 1 (mod λ(n)), the CRT values. */
function checkRsaNumbers(jwk: JsonWebKey): void {
  if (jwk.oth) throw badRequest('multi-prime RSA keys are not supported', undefined, 'invalid_key');
  const [n, e, d, p, q, dp, dq, qi] = [jwk.n, jwk.e, jwk.d, jwk.p, jwk.q, jwk.dp, jwk.dq, jwk.qi].map(big) as [
    bigint,
    bigint,
    bigint,
    bigint,
    bigint,
    bigint,
    bigint,
    bigint,
  ];
  if (e < 3n || e % 2n === 0n || e >= n) throw inconsistent('the public exponent e is not an odd number between 3 and n');
  if (p * q !== n) throw inconsistent('n is not the product of p and q');
  if (!checkPrimeSync(p, { checks: 16 }) || !checkPrimeSync(q, { checks: 16 })) throw inconsistent('p or q is not prime');
  const lambda = ((p - 1n) * (q - 1n)) / gcd(p - 1n, q - 1n);
  if ((d * e) % lambda !== 1n) throw inconsistent('d·e is not congruent to 1 modulo λ(n)');
  if (dp !== d % (p - 1n) || dq !== d % (q - 1n)) throw inconsistent('the CRT exponents dP, dQ do not match d');
  if ((qi * q) % p !== 1n) throw inconsistent('the CRT coefficient qInv is not the inverse of q modulo p');
}

const ECDH_CURVES: Record<string, string> = { prime256v1: 'prime256v1', secp384r1: 'secp384r1', secp521r1: 'secp521r1' };

/** The EC public point is the private scalar times the generator (recomputed by OpenSSL's ECDH). */
function checkEcPoint(key: KeyObject, jwk: JsonWebKey): void {
  const curve = ECDH_CURVES[key.asymmetricKeyDetails?.namedCurve ?? ''];
  if (!curve) return; // describeKey refuses other curves with its own sentence
  const ecdh = createECDH(curve);
  ecdh.setPrivateKey(Buffer.from(jwk.d ?? '', 'base64url'));
  const computed = ecdh.getPublicKey();
  const size = (computed.length - 1) / 2;
  const given = Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x ?? '', 'base64url'), Buffer.from(jwk.y ?? '', 'base64url')]);
  if (given.length !== 1 + 2 * size || !given.equals(computed)) throw inconsistent('the public point does not match the private scalar');
}

/** A signature made with the private key verifies with its public key (X25519: key agreement both ways gives one secret). */
function pairwiseTest(key: KeyObject): void {
  const pub = createPublicKey(key);
  if (key.asymmetricKeyType === 'x25519') {
    const other = generateKeyPairSync('x25519');
    const a = diffieHellman({ privateKey: key, publicKey: other.publicKey });
    const b = diffieHellman({ privateKey: other.privateKey, publicKey: pub });
    if (!a.equals(b)) throw inconsistent('the public key does not belong to the private key');
    return;
  }
  const message = randomBytes(32);
  const digest = key.asymmetricKeyType === 'ed25519' || key.asymmetricKeyType === 'ed448' ? null : 'sha256';
  let ok: boolean;
  try {
    ok = verify(digest, message, pub, sign(digest, message, key));
  } catch {
    ok = false;
  }
  if (!ok) throw inconsistent('a signature made with it does not verify with its public key');
}

/**
 * Pairwise consistency of an imported private key, as `openssl pkey -check` tests it: RSA
 * numbers (RFC 8017 §3.2), the EC public point, and for every key type a sign/verify round
 * trip (key agreement for X25519). Keys of other types pass through to describeKey, which
 * names what is supported.
 */
export function assertPrivateKeyConsistent(key: KeyObject): void {
  const type = key.asymmetricKeyType;
  if (type === 'rsa') checkRsaNumbers(key.export({ format: 'jwk' }));
  else if (type === 'ec') checkEcPoint(key, key.export({ format: 'jwk' }));
  else if (type !== 'ed25519' && type !== 'ed448' && type !== 'x25519') return;
  pairwiseTest(key);
}

/**
 * Parses a PEM private key (PKCS#8, encrypted PKCS#8, PKCS#1 RSA, SEC1 EC) and checks its
 * consistency (assertPrivateKeyConsistent). A corrupt PEM, an encrypted key without a
 * passphrase, a wrong passphrase and an inconsistent key are 400s that say which.
 */
export function parsePrivateKeyPem(text: string, passphrase?: string): KeyObject {
  const key = readPrivateKeyPem(text, passphrase);
  assertPrivateKeyConsistent(key);
  return key;
}

function readPrivateKeyPem(text: string, passphrase?: string): KeyObject {
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

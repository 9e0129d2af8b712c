import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint } from 'jose';

/**
 * A device's public key. The device generates its key pair itself (Ed25519 or ECDSA P-256)
 * and sends only the public half, as a JWK (RFC 7517; an object, or its JSON text in a
 * form-encoded request) or a PEM `PUBLIC KEY` (SPKI); the
 * service stores the public JWK and derives the RFC 9421 algorithm from the key type.
 */
const DEVICE_ALGORITHMS = ['ed25519', 'ecdsa-p256-sha256'] as const;
export type DeviceAlgorithm = (typeof DEVICE_ALGORITHMS)[number];

/** The public JWK as stored: only the public members. */
export type PublicJwk = { kty: 'OKP'; crv: 'Ed25519'; x: string } | { kty: 'EC'; crv: 'P-256'; x: string; y: string };

export interface DevicePublicKey {
  readonly jwk: PublicJwk;
  readonly algorithm: DeviceAlgorithm;
  /** RFC 7638 JWK thumbprint (SHA-256, base64url), shown for review as `SHA256:<thumbprint>`. */
  readonly fingerprint: string;
}

export class PublicKeyError extends Error {}

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k'];

function toKeyObject(input: unknown): KeyObject {
  // a form-encoded request (RFC 8628 §3.1) carries a JWK as its JSON text
  if (typeof input === 'string' && input.trimStart().startsWith('{')) {
    try {
      input = JSON.parse(input) as unknown;
    } catch {
      throw new PublicKeyError('public_key starts like a JWK but is not valid JSON');
    }
  }
  if (typeof input === 'string') {
    if (/PRIVATE KEY/.test(input)) throw new PublicKeyError('a private key was sent: send only the public key');
    if (!/^-----BEGIN PUBLIC KEY-----[\s\S]+-----END PUBLIC KEY-----\s*$/.test(input.trim())) {
      throw new PublicKeyError('expected a JWK object or a PEM "PUBLIC KEY" (SPKI)');
    }
    try {
      return createPublicKey({ key: input, format: 'pem' });
    } catch {
      throw new PublicKeyError('the PEM public key does not parse');
    }
  }
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new PublicKeyError('expected a JWK object or a PEM "PUBLIC KEY" (SPKI)');
  const jwk = input as Record<string, unknown>;
  if (PRIVATE_MEMBERS.some((m) => m in jwk)) throw new PublicKeyError('a private key was sent: send only the public key');
  try {
    return createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
  } catch {
    throw new PublicKeyError('the JWK does not describe a valid public key');
  }
}

/** Parses and normalises a device public key; throws PublicKeyError with a sentence for the client. */
export async function parseDevicePublicKey(input: unknown): Promise<DevicePublicKey> {
  const key = toKeyObject(input);
  if (key.type !== 'public') throw new PublicKeyError('a private key was sent: send only the public key');
  const exported = key.export({ format: 'jwk' }) as Record<string, string>;
  let jwk: PublicJwk;
  let algorithm: DeviceAlgorithm;
  if (key.asymmetricKeyType === 'ed25519') {
    jwk = { kty: 'OKP', crv: 'Ed25519', x: exported.x! };
    algorithm = 'ed25519';
  } else if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') {
    jwk = { kty: 'EC', crv: 'P-256', x: exported.x!, y: exported.y! };
    algorithm = 'ecdsa-p256-sha256';
  } else {
    throw new PublicKeyError('unsupported key type: use Ed25519 or ECDSA P-256');
  }
  return { jwk, algorithm, fingerprint: await calculateJwkThumbprint(jwk, 'sha256') };
}

export const displayFingerprint = (thumbprint: string) => `SHA256:${thumbprint}`;

/** The key object of a stored public JWK (for verification). */
export const publicKeyObject = (jwk: PublicJwk): KeyObject => createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });

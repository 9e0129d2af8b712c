/**
 * The key specs a signing key can be generated with, and the one signing algorithm each
 * key signs with (the mechanism is chosen from the key, never from the request).
 *
 * | key spec  | signing algorithm(s)                 | PKCS#11 mechanism                      | signature                          |
 * |-----------|--------------------------------------|----------------------------------------|------------------------------------|
 * | EC_P256   | ECDSA_P256_SHA256                    | SHA-256 in process + CKM_ECDSA         | DER (ASN.1 ECDSA-Sig-Value)        |
 * | EC_P384   | ECDSA_P384_SHA384                    | SHA-384 in process + CKM_ECDSA         | DER (ASN.1 ECDSA-Sig-Value)        |
 * | ED25519   | ED25519                              | CKM_EDDSA (pure Ed25519, RFC 8032)     | 64 bytes R‖S                       |
 * | RSA_2048, RSA_3072, RSA_4096 | RSA_PKCS1_SHA256 (default) or RSA_PSS_SHA256 | CKM_SHA256_RSA_PKCS / CKM_SHA256_RSA_PKCS_PSS (MGF1-SHA256, salt 32) | modulus-sized |
 *
 * ECDSA signatures are returned DER-encoded — the encoding of X.509, CMS/Authenticode,
 * JAR signing, `openssl dgst -verify` and node:crypto's default. (PKCS#11 returns IEEE
 * P1363 r‖s; the backend converts.) AWS KMS returns DER too, so both backends agree.
 */
export const KEY_SPECS = ['EC_P256', 'EC_P384', 'ED25519', 'RSA_2048', 'RSA_3072', 'RSA_4096'] as const;
export type KeySpec = (typeof KEY_SPECS)[number];

export const SIGNING_ALGORITHMS = ['ECDSA_P256_SHA256', 'ECDSA_P384_SHA384', 'ED25519', 'RSA_PKCS1_SHA256', 'RSA_PSS_SHA256'] as const;
export type SigningAlgorithm = (typeof SIGNING_ALGORITHMS)[number];

interface AlgorithmInfo {
  /** Hash computed in process before the device call (ECDSA), or by the device (null). */
  readonly prehash: 'sha256' | 'sha384' | null;
  /** The signature encoding clients receive. */
  readonly encoding: 'der' | 'raw' | 'pkcs1' | 'pss';
  /** node:crypto verify parameters for this algorithm (used by tests and documentation). */
  readonly nodeHash: 'sha256' | 'sha384' | null;
}

export const ALGORITHMS: Readonly<Record<SigningAlgorithm, AlgorithmInfo>> = {
  ECDSA_P256_SHA256: { prehash: 'sha256', encoding: 'der', nodeHash: 'sha256' },
  ECDSA_P384_SHA384: { prehash: 'sha384', encoding: 'der', nodeHash: 'sha384' },
  ED25519: { prehash: null, encoding: 'raw', nodeHash: null },
  RSA_PKCS1_SHA256: { prehash: null, encoding: 'pkcs1', nodeHash: 'sha256' },
  RSA_PSS_SHA256: { prehash: null, encoding: 'pss', nodeHash: 'sha256' },
};

/** PSS salt length: the digest length (as AWS KMS and most code-signing tools use). */
export const PSS_SALT_LENGTH = 32;

/** The signing algorithms a key spec allows; the first is its default. */
export function algorithmsFor(spec: KeySpec): readonly SigningAlgorithm[] {
  switch (spec) {
    case 'EC_P256':
      return ['ECDSA_P256_SHA256'];
    case 'EC_P384':
      return ['ECDSA_P384_SHA384'];
    case 'ED25519':
      return ['ED25519'];
    default:
      return ['RSA_PKCS1_SHA256', 'RSA_PSS_SHA256'];
  }
}

export const rsaBits = (spec: KeySpec): number | null => (spec.startsWith('RSA_') ? Number(spec.slice(4)) : null);

import type { KeySpec, SigningAlgorithm } from './algorithms.js';

/**
 * The port every signing backend implements (PKCS#11, AWS KMS). A backend holds private
 * keys that never leave it: it generates them, signs with them and exports only public
 * keys. Backends know nothing of tenants beyond the labels they are given.
 */
export interface BackendStatus {
  readonly name: string;
  /** Configured in this deployment (a module path, KMS enabled). */
  readonly configured: boolean;
  /** The device answered just now (token found, session open). */
  readonly reachable: boolean;
  /** `available`, `unavailable` (not configured / not installed) or `error` (configured, failing). */
  readonly status: 'available' | 'unavailable' | 'error';
  /** Why it is not available, with what to do about it. Never a secret. */
  readonly reason?: string;
  readonly token_label?: string;
  readonly key_specs: readonly KeySpec[];
  readonly algorithms: readonly SigningAlgorithm[];
  /** PKCS#11 mechanism names the token offers that signing uses. */
  readonly mechanisms?: readonly string[];
}

/** Where a key lives in its backend: stored in the key's table record. */
export interface KeyRef {
  /** PKCS#11: the CKA_LABEL of the private key object. KMS: the key ARN. */
  readonly handle: string;
  /** PKCS#11: CKA_ID (hex). */
  readonly object_id?: string;
}

export interface GeneratedKey {
  readonly ref: KeyRef;
  /** SubjectPublicKeyInfo, DER. */
  readonly spki: Buffer;
}

export interface SigningBackend {
  readonly name: string;
  /** PKCS#11: the label of the token the keys live on. */
  readonly tokenLabel?: string;
  status(): Promise<BackendStatus>;
  /** Generates a key pair inside the backend; the private key is sensitive and non-extractable. */
  generateKey(spec: KeySpec, label: { tenantId: string; keyId: string }): Promise<GeneratedKey>;
  /** Signs `message` (the whole message; the backend hashes as the algorithm says). */
  sign(ref: KeyRef, algorithm: SigningAlgorithm, message: Buffer): Promise<Buffer>;
  /** Destroys the key inside the backend (KMS: schedules deletion). */
  destroyKey(ref: KeyRef): Promise<void>;
}

/** The backend is not configured or not installed here: 503 with the reason. */
export class BackendUnavailable extends Error {
  constructor(
    readonly backend: string,
    readonly reason: string,
  ) {
    super(`${backend} signing backend unavailable: ${reason}`);
    this.name = 'BackendUnavailable';
  }
}

/** The device failed (module not loadable, token gone, session lost, operation refused): 502. */
export class DeviceError extends Error {
  constructor(
    readonly backend: string,
    message: string,
    options?: { cause?: unknown; code?: string },
  ) {
    super(`${backend}: ${message}`, { cause: options?.cause });
    this.name = 'DeviceError';
    this.code = options?.code;
  }
  readonly code: string | undefined;
}

/** The backend cannot generate keys of this spec (e.g. Ed25519 on a token without EdDSA): 400. */
export class UnsupportedKeySpec extends Error {
  constructor(
    readonly backend: string,
    readonly spec: string,
    reason: string,
  ) {
    super(`the ${backend} backend cannot generate ${spec} keys: ${reason}`);
    this.name = 'UnsupportedKeySpec';
  }
}

/**
 * The key provider port: wraps and unwraps tenant data keys. AWS KMS in AWS, the local
 * keyring in the embedded runtime. The encryption context is bound to every wrap.
 */
export interface DataKey {
  readonly plaintext: Buffer;
  readonly wrapped: Uint8Array;
}

export interface KeyProvider {
  readonly name: 'kms' | 'local';
  generateDataKey(context: Record<string, string>): Promise<DataKey>;
  decryptDataKey(wrapped: Uint8Array, context: Record<string, string>): Promise<Buffer>;
  /** Cheap reachability check for /ready. */
  check(): Promise<void>;
}

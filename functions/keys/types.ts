/**
 * The key and certificate resource types of the keys and certificates families, as data:
 * the singular internal type (the `{type}` of the cross-type routes and the `R#<type>#`
 * of the table), where its routes live, and the scopes that read it, write it and export
 * its private part. Every type keeps the same public `meta` fields, so a catalogue or a
 * cross-type history can show any of them without knowing the family:
 *
 * | meta field   | meaning                                                                 |
 * |--------------|-------------------------------------------------------------------------|
 * | algorithm    | lower-case key algorithm (rsa, ec, ecdsa, ed25519, x25519) or JOSE alg  |
 * | bits, curve  | key size; curve name or null                                            |
 * | fingerprint  | the family's native fingerprint (ssh: `SHA256:…` as ssh-keygen -l; gpg: |
 * |              | 40 hex; others: lower-case hex SHA-256 of the SPKI or certificate DER)  |
 * | public_key   | the public part in the family's native text form                        |
 * | expires_at   | ISO time or null                                                        |
 * | has_private_key, source ("generated", "imported", "issued", "acme"), description, tags |
 *
 * Private material lives only in the sealed secret part of the resource and is returned
 * only by the export routes, to callers holding the `export` scopes below (handler-checked
 * where the route table says "handler").
 */
export const KEY_TYPES = {
  ssh_key: { type: 'ssh_key', label: 'SSH key', family: 'keys', path: '/api/v1/ssh-keys', scopes: { read: ['ssh:read'], write: ['ssh:write'], export: ['ssh:read', 'export:read'] } },
  gpg_key: { type: 'gpg_key', label: 'GPG key', family: 'keys', path: '/api/v1/gpg-keys', scopes: { read: ['gpg:read'], write: ['gpg:write'], export: ['gpg:read', 'export:read'] } },
  openssl_key: {
    type: 'openssl_key',
    label: 'OpenSSL key',
    family: 'keys',
    path: '/api/v1/openssl-keys',
    scopes: { read: ['credentials:read'], write: ['credentials:read', 'credentials:write'], export: ['credentials:read', 'export:read'] },
  },
  age_key: { type: 'age_key', label: 'age key', family: 'keys', path: '/api/v1/keys/age', scopes: KIND_SCOPES() },
  dkim_key: { type: 'dkim_key', label: 'DKIM key', family: 'keys', path: '/api/v1/keys/dkim', scopes: KIND_SCOPES() },
  jwt_signing_key: { type: 'jwt_signing_key', label: 'JWT signing key', family: 'keys', path: '/api/v1/keys/jwt-signing', scopes: KIND_SCOPES() },
  minisign_key: { type: 'minisign_key', label: 'minisign key', family: 'keys', path: '/api/v1/keys/minisign', scopes: KIND_SCOPES() },
  piv_key: { type: 'piv_key', label: 'PIV key', family: 'keys', path: '/api/v1/keys/piv', scopes: KIND_SCOPES() },
  smime_key: { type: 'smime_key', label: 'S/MIME key', family: 'keys', path: '/api/v1/keys/smime', scopes: KIND_SCOPES() },
  wireguard_key: { type: 'wireguard_key', label: 'WireGuard key', family: 'keys', path: '/api/v1/keys/wireguard', scopes: KIND_SCOPES() },
  certificate: {
    type: 'certificate',
    label: 'certificate',
    family: 'certificates',
    path: '/api/v1/certificates',
    scopes: { read: ['certs:read'], write: ['certs:write'], export: ['certs:read', 'export:read'] },
  },
  /** The account's CA (root + intermediate): public parts readable, private keys never exported. */
  certificate_authority: {
    type: 'certificate_authority',
    label: 'certificate authority',
    family: 'certificates',
    path: '/api/v1/certificates',
    scopes: { read: ['certs:read'], write: ['certs:write'], export: [] as string[] },
  },
} as const satisfies Record<string, KeyTypeDescriptor>;

/** The seven `/api/v1/keys/{kind}` kinds: both routes need credentials:write; private parts also export:read. */
function KIND_SCOPES() {
  return { read: ['credentials:write'], write: ['credentials:write'], export: ['credentials:write', 'export:read'] };
}

export interface KeyTypeDescriptor {
  readonly type: string;
  readonly label: string;
  readonly family: 'keys' | 'certificates';
  /** The collection path of the type's routes. */
  readonly path: string;
  readonly scopes: { readonly read: readonly string[]; readonly write: readonly string[]; readonly export: readonly string[] };
}

export type KeyType = keyof typeof KEY_TYPES;
export const KEY_TYPE_NAMES = Object.keys(KEY_TYPES) as KeyType[];

/** Public metadata every key and certificate type stores (see the table above). */
export interface KeyMetaBase {
  readonly algorithm: string;
  readonly bits: number | null;
  readonly curve: string | null;
  readonly fingerprint: string;
  readonly public_key: string;
  readonly expires_at: string | null;
  readonly has_private_key: boolean;
  readonly source: 'generated' | 'imported' | 'issued' | 'acme';
  readonly description: string;
  readonly tags: string[];
}

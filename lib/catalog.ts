/**
 * THE resource catalogue: every stored resource type under its singular internal name — the
 * `{type}` of the cross-type routes `/api/v1/{type}/{id}/...` and the `R#<type>#` of the
 * table — with its collection path, label, route family, the scopes that read, write,
 * delete and export it, and whether it holds key material (docs/architecture.md).
 *
 * Every scope check derives from here: the route table's collection rows
 * (test/unit/catalog.test.ts compares them with the contract's routes.tsv), the handler-made
 * checks of the key families and certificates, and the cross-type checks of history,
 * shares, temporary access, lookup, variables and agents. The types' body schemas live in
 * one module per type (lib/credentials/types/, lib/secrets/schemas.ts, the key families'
 * handler modules), each naming its catalogue entry, so a function loads only its own.
 *
 * Scope rules (the contract's route table where it names one):
 * - `read`   — reading one resource: the item GET's scopes (router or handler);
 * - `write`  — creating and updating: the POST/PUT scopes;
 * - `delete` — the DELETE scopes;
 * - `export` — opening private key material: the export routes' scopes. Outside its own
 *   export routes (history versions, container lookup, temporary access), a key type's
 *   secret part needs these too (`secretReadScopes`).
 */
export type Family = 'secrets' | 'containers' | 'credentials' | 'passwords' | 'tokens' | 'keys' | 'certificates';

export interface CatalogEntry {
  readonly type: string;
  /** The collection segment(s) after /api/v1/, e.g. `wifi-credentials`, `keys/age`. */
  readonly collection: string;
  /** The collection path, e.g. /api/v1/wifi-credentials. */
  readonly path: string;
  /** The response key of a list: the collection with `_` for `-` (`wifi_credentials`). */
  readonly listKey: string;
  readonly label: string;
  /** The route family of the type's routes (lib/routes.ts). */
  readonly family: Family;
  readonly scopes: {
    readonly read: readonly string[];
    readonly write: readonly string[];
    readonly delete: readonly string[];
    readonly export: readonly string[];
  };
  /** Holds key material: its secret part leaves only through export routes and scopes. */
  readonly key: boolean;
  /** Addressable as `{type}` by the cross-type routes (false: internal, e.g. the account CA). */
  readonly crossType: boolean;
  /** Stored fields never rendered (hashes, derived state). */
  readonly hidden?: readonly string[];
  /** Secret fields the generic GET never returns (only a route with the export scopes does). */
  readonly withheld?: readonly string[];
}

type Scopes = CatalogEntry['scopes'];

const entry = (type: string, collection: string, label: string, family: Family, scopes: Scopes, more: Partial<CatalogEntry> = {}): CatalogEntry => ({
  type,
  collection,
  path: `/api/v1/${collection}`,
  listKey: collection.replace(/-/g, '_'),
  label,
  family,
  scopes,
  key: false,
  crossType: true,
  ...more,
});

const s = (read: string[], write: string[], del: string[], exp: string[] = [...read, 'export:read']): Scopes => ({
  read,
  write,
  delete: del,
  export: exp,
});

/** The 17 typed credential collections: credentials:read to read, read + write/delete to change. */
const CRED = s(['credentials:read'], ['credentials:read', 'credentials:write'], ['credentials:delete', 'credentials:read']);
const credential = (type: string, collection: string, label: string, more: Partial<CatalogEntry> = {}) =>
  entry(type, collection, label, 'credentials', CRED, more);

/** The seven `/api/v1/keys/{kind}` kinds: both routes need credentials:write; private parts also export:read. */
const KIND = s(['credentials:write'], ['credentials:write'], ['credentials:write']);
const kind = (k: string, label: string) => entry(`${k.replace('-', '_')}_key`, `keys/${k}`, label, 'keys', KIND, { key: true });

export const CATALOG = {
  secret: entry('secret', 'secrets', 'secret', 'secrets', s(['secrets:read'], ['secrets:write'], ['secrets:delete'])),
  container: entry(
    'container',
    'containers',
    'container',
    'containers',
    s(['containers:read'], ['containers:read', 'containers:write'], ['containers:read', 'containers:write']),
  ),
  computer_credential: credential('computer_credential', 'computer-credentials', 'computer credential'),
  code_signing_key: credential('code_signing_key', 'code-signing-keys', 'code-signing key', { key: true, withheld: ['private_key'] }),
  disk_credential: credential('disk_credential', 'disk-credentials', 'disk credential'),
  integration: credential('integration', 'integrations', 'integration'),
  jks_keystore: credential('jks_keystore', 'jks-keystores', 'JKS keystore', { key: true, withheld: ['private_keys'] }),
  ldap_bind_credential: credential('ldap_bind_credential', 'ldap-bind-credentials', 'LDAP bind credential'),
  ntlm: credential('ntlm', 'ntlm', 'NTLM credential'),
  radius_credential: credential('radius_credential', 'radius-credentials', 'RADIUS credential'),
  root_credential: credential('root_credential', 'root-credentials', 'root credential'),
  service_config: credential('service_config', 'service-config', 'service configuration'),
  social_credential: credential('social_credential', 'social-credentials', 'social credential'),
  software_license: credential('software_license', 'software-licenses', 'software license'),
  totp_token: credential('totp_token', 'totp-tokens', 'TOTP token'),
  vpn_credential: credential('vpn_credential', 'vpn-credentials', 'VPN credential'),
  wifi_credential: credential('wifi_credential', 'wifi-credentials', 'Wi-Fi credential'),
  windows_credential: credential('windows_credential', 'windows-credentials', 'Windows credential'),
  yubikey: credential('yubikey', 'yubikeys', 'YubiKey'),
  password: entry('password', 'passwords', 'password', 'passwords', s(['passwords:read'], ['passwords:write'], ['passwords:write'])),
  crypto_wallet: entry(
    'crypto_wallet',
    'crypto-wallets',
    'crypto wallet',
    'passwords',
    s(['passwords:read'], ['passwords:read', 'passwords:write'], ['passwords:read', 'passwords:write']),
    {
      key: true,
    },
  ),
  api_token: entry(
    'api_token',
    'api-tokens',
    'API token',
    'tokens',
    s(['tokens:read'], ['tokens:read', 'tokens:write'], ['tokens:read', 'tokens:write']),
    { hidden: ['hash', 'previous_hash'] },
  ),
  ssh_key: entry('ssh_key', 'ssh-keys', 'SSH key', 'keys', s(['ssh:read'], ['ssh:write'], ['ssh:write']), { key: true }),
  gpg_key: entry('gpg_key', 'gpg-keys', 'GPG key', 'keys', s(['gpg:read'], ['gpg:write'], ['gpg:write']), { key: true }),
  openssl_key: entry('openssl_key', 'openssl-keys', 'OpenSSL key', 'keys', CRED, { key: true }),
  age_key: kind('age', 'age key'),
  dkim_key: kind('dkim', 'DKIM key'),
  jwt_signing_key: kind('jwt-signing', 'JWT signing key'),
  minisign_key: kind('minisign', 'minisign key'),
  piv_key: kind('piv', 'PIV key'),
  smime_key: kind('smime', 'S/MIME key'),
  wireguard_key: kind('wireguard', 'WireGuard key'),
  certificate: entry('certificate', 'certificates', 'certificate', 'certificates', s(['certs:read'], ['certs:write'], ['certs:revoke']), {
    key: true,
  }),
  /** The account's CA (root + intermediate): public parts readable, private keys never exported. */
  certificate_authority: entry(
    'certificate_authority',
    'certificates',
    'certificate authority',
    'certificates',
    s(['certs:read'], ['certs:write'], ['certs:write'], []),
    {
      key: true,
      crossType: false,
    },
  ),
} as const satisfies Record<string, CatalogEntry>;

export type ResourceTypeName = keyof typeof CATALOG;

/** The types addressable by the cross-type routes (`{type}`), in catalogue order. */
export const RESOURCE_TYPES: readonly CatalogEntry[] = Object.values(CATALOG).filter((e) => e.crossType);

const BY_NAME: ReadonlyMap<string, CatalogEntry> = new Map(RESOURCE_TYPES.map((e) => [e.type, e]));

/** A cross-type-addressable type by its singular name, or undefined. */
export const resourceType = (type: string): CatalogEntry | undefined => BY_NAME.get(type);

/**
 * Scopes that open a resource's secret part outside its own routes (history versions,
 * container lookup, temporary access): a key type's export scopes, the same rule its own
 * export routes apply to private keys; otherwise its read scopes.
 */
export const secretReadScopes = (e: CatalogEntry): readonly string[] => (e.key ? e.scopes.export : e.scopes.read);

/** Public metadata every key and certificate type stores (docs/api.md, "Keys and certificates"). */
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

/**
 * Every stored resource type under its singular internal name — the `{type}` of the
 * cross-type routes `/api/v1/{type}/{id}/...` (spec: "Cross-type resource addressing") —
 * with its collection path and the scopes that read, write and delete it. One table, read
 * by history, sharing, temporary access, lookup and the key catalogue; the feature modules
 * (schemas, formats) refer to it by name.
 */
export interface ResourceType {
  readonly type: string;
  /** The collection path, e.g. /api/v1/wifi-credentials. */
  readonly path: string;
  /** Scopes needed to read the secret part (values). */
  readonly read: readonly string[];
  readonly write: readonly string[];
  readonly delete: readonly string[];
  /** Holds key material (listed by the key catalogue). */
  readonly key?: boolean;
}

const t = (type: string, path: string, read: string, write: string, del = write, key = false): ResourceType => ({
  type,
  path: `/api/v1/${path}`,
  read: [read],
  write: [write],
  delete: [del],
  ...(key ? { key } : {}),
});

const CREDENTIAL_COLLECTIONS: Record<string, string> = {
  computer_credential: 'computer-credentials',
  code_signing_key: 'code-signing-keys',
  disk_credential: 'disk-credentials',
  integration: 'integrations',
  jks_keystore: 'jks-keystores',
  ldap_bind_credential: 'ldap-bind-credentials',
  ntlm: 'ntlm',
  radius_credential: 'radius-credentials',
  root_credential: 'root-credentials',
  service_config: 'service-config',
  social_credential: 'social-credentials',
  software_license: 'software-licenses',
  totp_token: 'totp-tokens',
  vpn_credential: 'vpn-credentials',
  wifi_credential: 'wifi-credentials',
  windows_credential: 'windows-credentials',
  yubikey: 'yubikeys',
};

const KEY_KINDS = ['age', 'dkim', 'jwt-signing', 'minisign', 'piv', 'smime', 'wireguard'] as const;

export const RESOURCE_TYPES: readonly ResourceType[] = [
  t('secret', 'secrets', 'secrets:read', 'secrets:write', 'secrets:delete'),
  t('container', 'containers', 'containers:read', 'containers:write'),
  ...Object.entries(CREDENTIAL_COLLECTIONS).map(([type, path]) =>
    t(type, path, 'credentials:read', 'credentials:write', 'credentials:delete', type === 'code_signing_key' || type === 'jks_keystore'),
  ),
  t('password', 'passwords', 'passwords:read', 'passwords:write'),
  t('crypto_wallet', 'crypto-wallets', 'passwords:read', 'passwords:write', 'passwords:write', true),
  t('api_token', 'api-tokens', 'tokens:read', 'tokens:write'),
  t('ssh_key', 'ssh-keys', 'ssh:read', 'ssh:write', 'ssh:write', true),
  t('gpg_key', 'gpg-keys', 'gpg:read', 'gpg:write', 'gpg:write', true),
  t('openssl_key', 'openssl-keys', 'credentials:read', 'credentials:write', 'credentials:delete', true),
  ...KEY_KINDS.map((kind) => t(`${kind.replace('-', '_')}_key`, `keys/${kind}`, 'credentials:read', 'credentials:write', 'credentials:write', true)),
  t('certificate', 'certificates', 'certs:read', 'certs:write', 'certs:revoke', true),
];

export const RESOURCE_TYPES_BY_NAME: ReadonlyMap<string, ResourceType> = new Map(RESOURCE_TYPES.map((r) => [r.type, r]));

export const resourceType = (type: string): ResourceType | undefined => RESOURCE_TYPES_BY_NAME.get(type);

/**
 * Scopes that open a resource's secret part outside its own routes (history versions,
 * container lookup, temporary access): for key material, the type's read scope plus
 * `export:read`, the same rule the key families' export routes apply to private keys.
 */
export const secretReadScopes = (rt: ResourceType): readonly string[] => (rt.key ? [...rt.read, 'export:read'] : rt.read);

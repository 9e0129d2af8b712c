import { CATALOG } from '../catalog.js';

/**
 * Deterministic example bodies for integrators (GET /api/v1/mock/templates/{type}): for every
 * type of the resource catalogue (lib/catalog.ts), the route that creates one and a body that
 * route accepts. The table is keyed by type in this one place; test/api/mock.test.ts posts
 * every template to its route, so a new catalogue type without a template fails there. The
 * values are obviously fake (example.test names, the BIP-39 test mnemonic, fixed
 * RFC-documentation sample keys): nothing here is a credential anyone uses.
 */
export interface Template {
  readonly type: string;
  readonly create: { readonly method: 'POST'; readonly path: string };
  readonly body: Readonly<Record<string, unknown>>;
  readonly note?: string;
}

/** The BIP-39 test vector (all-"abandon"): a wallet nobody holds funds in. */
const TEST_MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';

/** Body of each type; `route` when the type is created somewhere else than POST on its collection. */
const BODIES: Readonly<Record<string, { route?: string; body: Record<string, unknown>; note?: string }>> = {
  secret: { body: { name: 'example-secret', description: 'an example generic secret', data: { value: 'example-value' }, tags: ['example'] } },
  container: { body: { name: 'example-container', description: 'groups related secrets' } },
  computer_credential: {
    body: { name: 'example-computer', hostname: 'db1.example.test', protocol: 'ssh', port: 22, username: 'admin', password: 'example-password' },
  },
  code_signing_key: { body: { name: 'example-code-signing', generate: 'ecdsa-p256', platform: 'java-jar' } },
  disk_credential: {
    body: { name: 'example-disk', encryption: 'luks', device: '/dev/nvme0n1p3', hostname: 'laptop-1', passphrase: 'example-passphrase' },
  },
  integration: {
    body: {
      name: 'example-integration',
      provider: 'postgresql',
      host: 'db.example.test',
      port: 5432,
      database: 'app',
      username: 'app',
      password: 'example-password',
      tls_mode: 'verify-full',
    },
  },
  jks_keystore: { body: { name: 'example-keystore', store_password: 'example-store-password' } },
  ldap_bind_credential: {
    body: {
      name: 'example-ldap',
      url: 'ldaps://ldap.example.test',
      bind_dn: 'cn=svc,dc=example,dc=test',
      password: 'example-password',
      base_dn: 'dc=example,dc=test',
    },
  },
  ntlm: { body: { name: 'example-ntlm', domain: 'EXAMPLE', username: 'svc', nt_hash: '8846f7eaee8fb117ad06bdd830b7586c', password: 'password' } },
  radius_credential: { body: { name: 'example-radius', server: 'radius.example.test', shared_secret: 'example-shared-secret', auth_method: 'pap' } },
  root_credential: {
    body: {
      name: 'example-root',
      system: 'example-aws',
      account_type: 'aws-root',
      username: 'root@example.test',
      password: 'example-password',
      rotate_by: '2099-01-01T00:00:00Z',
    },
  },
  service_config: {
    body: {
      name: 'example-service-config',
      kind: 'generic',
      service: 'billing',
      settings: { region: 'eu-west-1' },
      secret_settings: { api_key: 'example-api-key' },
    },
  },
  social_credential: { body: { name: 'example-social', platform: 'github', username: 'example-bot', password: 'example-password' } },
  software_license: {
    body: { name: 'example-license', product: 'Example IDE', license_key: 'EXAMPLE-0000-0000-0000', seats: 10, expires_at: '2099-01-01T00:00:00Z' },
  },
  // RFC 6238's test secret ("12345678901234567890" in base32)
  totp_token: { body: { name: 'example-totp', issuer: 'Example', account: 'alice@example.test', secret: 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ' } },
  vpn_credential: { body: { name: 'example-vpn', protocol: 'openvpn', server: 'vpn.example.test', username: 'alice', password: 'example-password' } },
  wifi_credential: { body: { name: 'example-wifi', ssid: 'Example-Guest', security: 'wpa2-personal', passphrase: 'example-passphrase' } },
  windows_credential: {
    body: { name: 'example-windows', target: 'fileserver.example.test', domain: 'EXAMPLE', username: 'alice', password: 'example-password' },
  },
  // Yubico's documented sample OTP identity (modhex public id, hex private id and AES key)
  yubikey: {
    body: {
      name: 'example-yubikey',
      public_id: 'vvccccfiluij',
      private_id: '8792ebfe26cc',
      aes_key: 'ecde18dbe76fbd0c33330f1c354871db',
      serial: 1234567,
    },
  },
  password: { body: { name: 'example-password', username: 'alice', password: 'example-password', url: 'https://example.test/login' } },
  crypto_wallet: { body: { name: 'example-wallet', chain: 'ethereum', mnemonic: TEST_MNEMONIC } },
  api_token: { body: { name: 'example-token', scopes: ['secrets:read'] } },
  ssh_key: { route: 'generate', body: { name: 'example-ssh', algorithm: 'ed25519', comment: 'example@example.test' } },
  gpg_key: {
    route: 'generate',
    body: { name: 'example-gpg', algorithm: 'curve25519', user_ids: [{ name: 'Example User', email: 'example@example.test' }] },
  },
  openssl_key: { route: 'generate', body: { name: 'example-openssl', algorithm: 'ec' } },
  age_key: { route: 'generate', body: { name: 'example-age' } },
  dkim_key: { route: 'generate', body: { name: 'example-dkim', selector: 'example', domain: 'example.test' } },
  jwt_signing_key: { route: 'generate', body: { name: 'example-jwt', algorithm: 'ES256' } },
  minisign_key: { route: 'generate', body: { name: 'example-minisign', comment: 'example release signing' } },
  piv_key: { route: 'generate', body: { name: 'example-piv', slot: '9a', algorithm: 'ec-p256', subject: 'Example PIV' } },
  smime_key: { route: 'generate', body: { name: 'example-smime', email: 'alice@example.test', common_name: 'Alice Example' } },
  wireguard_key: { route: 'generate', body: { name: 'example-wireguard', address: ['10.8.0.2/32'], endpoint: 'vpn.example.test:51820' } },
  certificate: { route: 'enroll', body: { name: 'example-certificate', subject: { common_name: 'service.example.test' }, validity_days: 30 } },
  certificate_authority: {
    route: 'enroll',
    body: { name: 'example-first-certificate', subject: { common_name: 'first.example.test' }, validity_days: 30 },
    note: "the account CA is created with the account's first certificate enrollment",
  },
};

/** The template of a catalogue type, or undefined when the type is not in the catalogue. */
export function templateOf(type: string): Template | undefined {
  const entry = Object.hasOwn(CATALOG, type) ? CATALOG[type as keyof typeof CATALOG] : undefined;
  const spec = Object.hasOwn(BODIES, type) ? BODIES[type] : undefined;
  if (!entry || !spec) return undefined;
  return {
    type,
    create: { method: 'POST', path: spec.route ? `${entry.path}/${spec.route}` : entry.path },
    body: spec.body,
    ...(spec.note ? { note: spec.note } : {}),
  };
}

/** The types that have a template: exactly the catalogue's (checked by the API test). */
export const templateTypes = (): string[] => Object.keys(CATALOG).filter((t) => templateOf(t) !== undefined);

import * as z from 'zod/v4';
import {
  Base32Secret,
  CertificatePem,
  Email,
  Host,
  HttpUrl,
  IpAddress,
  Port,
  PrivateKeyPem,
  RecoveryCodes,
  Secret,
  Text,
  Timestamp,
} from '../fields.js';
import { Problems, type TypeSpec } from '../model.js';

/**
 * The typed credential collections without format-specific routes: each is a schema of the
 * fields a real user of that credential needs, the secret ones named. The collections with
 * their own routes and formats live beside this file (totp.ts, yubikeys.ts, jks.ts,
 * code-signing-key.ts, integrations.ts); each handler module imports its own (functions/credentials/<collection>.ts).
 */
const REPLACE = 'PUT replaces the whole representation: public fields left out are cleared; secret fields left out keep their stored value.';

/** A type with the default PUT semantics (replace; secrets left out are kept). */
const replaceable = (spec: Omit<TypeSpec, 'update' | 'updateSemantics'>): TypeSpec => ({ update: 'replace', updateSemantics: REPLACE, ...spec });

export const computerCredential = replaceable({
  type: 'computer_credential',
  summary: 'Log-in to a server or workstation over SSH, RDP, VNC or WinRM.',
  fields: z.strictObject({
    hostname: Host,
    ip_address: IpAddress.optional(),
    os: z.enum(['linux', 'windows', 'macos', 'bsd', 'other']).optional(),
    protocol: z.enum(['ssh', 'rdp', 'vnc', 'winrm', 'telnet', 'other']).default('ssh'),
    port: Port.optional(),
    username: Text(256),
    password: Secret().optional(),
    private_key: PrivateKeyPem.optional(),
    private_key_passphrase: Secret(1024).optional(),
  }),
  secret: ['password', 'private_key', 'private_key_passphrase'],
  requiresOneOf: ['password', 'private_key'],
});

/** BitLocker recovery password: 8 groups of 6 digits, each group a multiple of 11 below 720896. */
export const isBitlockerRecoveryKey = (k: string) =>
  /^\d{6}(-\d{6}){7}$/.test(k) && k.split('-').every((g) => Number(g) % 11 === 0 && Number(g) < 720896);

export const diskCredential = replaceable({
  type: 'disk_credential',
  summary: 'Full-disk or volume encryption: BitLocker, LUKS, FileVault, VeraCrypt.',
  fields: z.strictObject({
    encryption: z.enum(['bitlocker', 'luks', 'filevault', 'veracrypt', 'apfs', 'other']),
    device: Text(256),
    hostname: Host.optional(),
    volume_id: Text(256).optional(),
    passphrase: Secret(1024).optional(),
    recovery_key: Secret(1024).optional(),
    key_file_base64: z
      .base64()
      .max(64 * 1024)
      .optional(),
  }),
  secret: ['passphrase', 'recovery_key', 'key_file_base64'],
  requiresOneOf: ['passphrase', 'recovery_key', 'key_file_base64'],
  prepare(_ctx, f) {
    new Problems()
      .check(
        f.encryption !== 'bitlocker' || f.recovery_key === undefined || isBitlockerRecoveryKey(f.recovery_key as string),
        'recovery_key',
        'a BitLocker recovery password is 8 groups of 6 digits, each a multiple of 11',
      )
      .throwIfAny();
    return f;
  },
});

export const ldapBindCredential = replaceable({
  type: 'ldap_bind_credential',
  summary: 'A service account that binds to an LDAP directory.',
  fields: z.strictObject({
    url: z.url({ protocol: /^ldaps?$/ }).max(2048),
    bind_dn: Text(1024),
    password: Secret(),
    base_dn: Text(1024).optional(),
    start_tls: z.boolean().default(false),
    ca_certificate: CertificatePem.optional(),
    timeout_seconds: z.number().int().min(1).max(300).optional(),
  }),
  secret: ['password'],
  prepare(_ctx, f) {
    new Problems()
      .check(!(f.start_tls && String(f.url).startsWith('ldaps:')), 'start_tls', 'StartTLS is for ldap:// URLs; ldaps:// is already TLS')
      .throwIfAny();
    return f;
  },
});

const NtHash = z
  .string()
  .regex(/^[0-9a-fA-F]{32}$/, '16 bytes as 32 hex digits')
  .transform((s) => s.toLowerCase());

export const ntlm = replaceable({
  type: 'ntlm',
  summary: 'NTLM credentials: domain, user name and NT hash (pass-the-hash capable tooling, legacy SSO).',
  fields: z.strictObject({
    domain: Text(255),
    username: Text(256),
    workstation: Text(15).optional(),
    nt_hash: NtHash,
    lm_hash: NtHash.optional(),
    password: Secret().optional(),
  }),
  secret: ['nt_hash', 'lm_hash', 'password'],
});

export const radiusCredential = replaceable({
  type: 'radius_credential',
  summary: 'A RADIUS client: server, ports, shared secret, optional test user.',
  fields: z.strictObject({
    server: Host,
    auth_port: Port.default(1812),
    accounting_port: Port.default(1813),
    shared_secret: Secret(128),
    nas_identifier: Text(253).optional(),
    auth_method: z.enum(['pap', 'chap', 'mschapv2', 'eap-tls', 'eap-ttls', 'peap']).optional(),
    username: Text(253).optional(),
    password: Secret().optional(),
  }),
  secret: ['shared_secret', 'password'],
});

export const rootCredential = replaceable({
  type: 'root_credential',
  summary: 'Break-glass super-user credentials (root, Administrator, cloud root account) with a rotation deadline.',
  fields: z.strictObject({
    system: Text(256),
    account_type: z.enum([
      'unix-root',
      'windows-administrator',
      'aws-root',
      'gcp-owner',
      'azure-global-admin',
      'database-superuser',
      'network-device',
      'other',
    ]),
    username: Text(256).default('root'),
    password: Secret(),
    mfa_secret: Base32Secret.optional(),
    recovery_codes: RecoveryCodes.optional(),
    rotate_by: Timestamp.optional(),
    break_glass: z.boolean().default(true),
  }),
  secret: ['password', 'mfa_secret', 'recovery_codes'],
  expires: 'rotate_by',
});

export const socialCredential = replaceable({
  type: 'social_credential',
  summary: 'A social-media or community account (the company page, the release bot).',
  fields: z.strictObject({
    platform: z.enum([
      'x',
      'facebook',
      'instagram',
      'linkedin',
      'github',
      'gitlab',
      'google',
      'youtube',
      'tiktok',
      'mastodon',
      'reddit',
      'discord',
      'other',
    ]),
    username: Text(256),
    email: Email.optional(),
    profile_url: HttpUrl.optional(),
    password: Secret(),
    totp_secret: Base32Secret.optional(),
    recovery_codes: RecoveryCodes.optional(),
  }),
  secret: ['password', 'totp_secret', 'recovery_codes'],
});

export const softwareLicense = replaceable({
  type: 'software_license',
  summary: 'A software licence: product, key, seats, licensee, expiry.',
  fields: z.strictObject({
    product: Text(256),
    vendor: Text(256).optional(),
    version: Text(64).optional(),
    edition: Text(128).optional(),
    license_key: Secret(16 * 1024),
    license_file_base64: z
      .base64()
      .max(256 * 1024)
      .optional(),
    seats: z.number().int().min(1).max(10_000_000).optional(),
    licensed_to: Text(256).optional(),
    license_email: Email.optional(),
    purchased_at: Timestamp.optional(),
    expires_at: Timestamp.optional(),
    support_expires_at: Timestamp.optional(),
  }),
  secret: ['license_key', 'license_file_base64'],
  expires: 'expires_at',
});

export const vpnCredential = replaceable({
  type: 'vpn_credential',
  summary: 'A VPN profile: protocol, server, user credentials, pre-shared key or client certificate, configuration file.',
  fields: z.strictObject({
    protocol: z.enum(['openvpn', 'wireguard', 'ipsec-ikev2', 'l2tp-ipsec', 'sstp', 'anyconnect', 'other']),
    server: Host,
    port: Port.optional(),
    username: Text(256).optional(),
    password: Secret().optional(),
    pre_shared_key: Secret(1024).optional(),
    client_certificate: CertificatePem.optional(),
    private_key: z.union([PrivateKeyPem, z.base64().length(44)]).optional(),
    config_file: Secret(256 * 1024).optional(),
  }),
  secret: ['password', 'pre_shared_key', 'private_key', 'config_file'],
  prepare(_ctx, f) {
    const p = new Problems();
    if (f.protocol === 'wireguard')
      p.check(f.private_key !== undefined || f.config_file !== undefined, 'private_key', 'WireGuard needs private_key or config_file');
    if (f.protocol === 'l2tp-ipsec')
      p.check(
        f.pre_shared_key !== undefined || f.client_certificate !== undefined,
        'pre_shared_key',
        'L2TP/IPsec needs pre_shared_key or client_certificate',
      );
    p.check(
      ['password', 'pre_shared_key', 'private_key', 'config_file'].some((k) => f[k] !== undefined),
      'password',
      'at least one of password, pre_shared_key, private_key, config_file is required',
    );
    p.throwIfAny();
    return f;
  },
});

const PERSONAL = ['wpa-personal', 'wpa2-personal', 'wpa3-personal'];
const isWpaPassphrase = (p: string) => /^[\x20-\x7e]{8,63}$/.test(p) || /^[0-9a-fA-F]{64}$/.test(p);
const isWepKey = (p: string) => /^([\x20-\x7e]{5}|[\x20-\x7e]{13}|[0-9a-fA-F]{10}|[0-9a-fA-F]{26})$/.test(p);

export const wifiCredential = replaceable({
  type: 'wifi_credential',
  summary: 'A Wi-Fi network: SSID, security, passphrase or enterprise (802.1X) log-in.',
  fields: z.strictObject({
    ssid: z
      .string()
      .min(1)
      .refine((s) => Buffer.byteLength(s, 'utf8') <= 32, { message: 'at most 32 bytes' }),
    security: z.enum(['open', 'wep', 'wpa-personal', 'wpa2-personal', 'wpa3-personal', 'wpa2-enterprise', 'wpa3-enterprise']),
    hidden: z.boolean().default(false),
    passphrase: Secret(64).optional(),
    eap_method: z.enum(['peap', 'ttls', 'tls', 'pwd']).optional(),
    identity: Text(256).optional(),
    password: Secret().optional(),
  }),
  secret: ['passphrase', 'password'],
  prepare(_ctx, f) {
    const security = f.security as string;
    const pass = f.passphrase as string | undefined;
    const p = new Problems();
    if (PERSONAL.includes(security))
      p.check(
        pass !== undefined && isWpaPassphrase(pass),
        'passphrase',
        'WPA personal needs a passphrase of 8–63 printable ASCII characters or 64 hex digits',
      );
    if (security === 'wep')
      p.check(pass !== undefined && isWepKey(pass), 'passphrase', 'a WEP key is 5 or 13 ASCII characters or 10 or 26 hex digits');
    if (security === 'open') p.check(pass === undefined, 'passphrase', 'an open network has no passphrase');
    if (security.endsWith('-enterprise'))
      p.check(f.eap_method !== undefined && f.identity !== undefined, 'eap_method', 'enterprise networks need eap_method and identity');
    p.throwIfAny();
    return f;
  },
});

export const windowsCredential = replaceable({
  type: 'windows_credential',
  summary: 'A Windows Credential Manager entry: target, user name, password, persistence.',
  fields: z.strictObject({
    target: Text(337),
    credential_type: z.enum(['domain-password', 'generic', 'domain-visible-password']).default('domain-password'),
    domain: Text(255).optional(),
    username: Text(513),
    password: Secret(2560),
    persist: z.enum(['session', 'local-machine', 'enterprise']).default('local-machine'),
  }),
  secret: ['password'],
});

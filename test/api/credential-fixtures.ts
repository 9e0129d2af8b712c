import { randomBytes } from 'node:crypto';
import { canary } from '../helpers/api.js';
import { opensslCert, toModhex } from './credentials-helpers.js';

/**
 * A valid create body (and an update, the expected public fields, invalid bodies) of every
 * collection the generic CRUD serves: the 17 typed credential collections, passwords, crypto
 * wallets. test/api/credentials.test.ts walks them all; the authorization matrix creates one
 * real object of each (test/api/authz-matrix.test.ts).
 */
export interface Fixture {
  /** The type's fields of a create body. */
  create(): Record<string, unknown>;
  /** A PUT body (the type's semantics: replace types send the whole representation). */
  update(created: Record<string, unknown>): Record<string, unknown>;
  /** Public fields expected after the update (undefined = cleared). */
  updated: Record<string, unknown>;
  /** Bodies that violate the schema or the type's rules. */
  invalid: Record<string, unknown>[];
}

const future = () => new Date(Date.now() + 30 * 86_400_000).toISOString();
export const hex = (n: number) => randomBytes(n).toString('hex');
const base32 = () => [...randomBytes(20)].map((b) => 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'[b & 31]).join('');
export const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const ca = opensslCert('Test Root CA', 'ec');
export const notCanary: string[] = [];
const remember = <T extends string>(v: T) => (notCanary.push(v), v);

export const FIXTURES: Record<string, Fixture> = {
  computer_credential: {
    create: () => ({ hostname: 'db1.example.test', protocol: 'ssh', port: 22, username: 'admin', password: canary('pc') }),
    update: () => ({ name: 'db2', hostname: 'db2.example.test', username: 'root' }),
    updated: { hostname: 'db2.example.test', username: 'root', protocol: 'ssh', port: undefined },
    invalid: [
      { hostname: 'bad host!', username: 'x', password: 'p' },
      { hostname: 'h.example.test', username: 'x' },
    ],
  },
  code_signing_key: {
    create: () => ({ generate: 'ecdsa-p256', platform: 'java-jar' }),
    update: () => ({ platform: 'authenticode' }),
    updated: { platform: 'authenticode', algorithm: 'EC', curve: 'P-256', exportable: false },
    invalid: [{ generate: 'rsa-1024' }, { backend: 'nosuch', generate: 'ed25519' }, { generate: 'ed25519', exportable: true }],
  },
  disk_credential: {
    create: () => ({ encryption: 'luks', device: '/dev/nvme0n1p3', hostname: 'laptop-7', passphrase: canary('disk') }),
    update: () => ({ name: 'laptop', encryption: 'luks', device: '/dev/sda2' }),
    updated: { device: '/dev/sda2', hostname: undefined },
    invalid: [
      { encryption: 'bitlocker', device: 'C:', recovery_key: '123456-123456-123456-123456-123456-123456-123456-123456' },
      { encryption: 'zfs', device: 'x', passphrase: 'p' },
    ],
  },
  integration: {
    create: () => ({
      provider: 'postgresql',
      host: '127.0.0.1',
      port: 5432,
      database: 'app',
      username: 'admin',
      password: canary('pg'),
      tls_mode: 'disable',
    }),
    update: () => ({ name: 'pg', provider: 'postgresql', host: 'db.internal.example.test', database: 'app', username: 'admin2' }),
    updated: { host: 'db.internal.example.test', username: 'admin2', tls_mode: 'verify-full', port: 5432 },
    invalid: [
      { provider: 'postgresql', host: 'h' },
      { provider: 'nosuch', host: 'h' },
      { provider: 'stripe', mode: 'test', publishable_key: 'pk_test_x', secret_key: 'nope' },
    ],
  },
  jks_keystore: {
    create: () => ({ store_password: canary('jks'), entries: [{ kind: 'trusted-certificate', alias: 'Root-CA', certificate: ca.cert }] }),
    update: () => ({ description: 'new description' }),
    updated: { store_type: 'pkcs12' },
    invalid: [
      { store_password: '12345' },
      { store_password: 'long-enough', entries: [{ kind: 'trusted-certificate', alias: 'x', certificate: 'not a cert' }] },
    ],
  },
  ldap_bind_credential: {
    create: () => ({
      url: 'ldaps://ldap.example.test',
      bind_dn: 'cn=svc,dc=example,dc=test',
      password: canary('ldap'),
      base_dn: 'dc=example,dc=test',
    }),
    update: () => ({ name: 'ldap', url: 'ldap://ldap.example.test', bind_dn: 'cn=svc2,dc=example,dc=test', start_tls: true }),
    updated: { url: 'ldap://ldap.example.test', start_tls: true, base_dn: undefined },
    invalid: [
      { url: 'http://ldap.example.test', bind_dn: 'x', password: 'p' },
      { url: 'ldaps://l.example.test', bind_dn: 'x', password: 'p', start_tls: true },
    ],
  },
  ntlm: {
    create: () => ({ domain: 'CORP', username: 'svc', nt_hash: remember(hex(16)), password: canary('ntlm') }),
    update: () => ({ name: 'ntlm', domain: 'CORP2', username: 'svc' }),
    updated: { domain: 'CORP2' },
    invalid: [{ domain: 'CORP', username: 'u', nt_hash: 'xyz' }],
  },
  radius_credential: {
    create: () => ({ server: 'radius.example.test', shared_secret: canary('radius'), auth_method: 'pap' }),
    update: () => ({ name: 'radius', server: '10.0.0.5', auth_port: 11812 }),
    updated: { server: '10.0.0.5', auth_port: 11812, accounting_port: 1813, auth_method: undefined },
    invalid: [{ server: 'r.example.test', shared_secret: 's', auth_port: 70000 }, { server: 'r.example.test' }],
  },
  root_credential: {
    create: () => ({ system: 'prod-aws', account_type: 'aws-root', username: 'root@example.test', password: canary('root'), rotate_by: future() }),
    update: () => ({ name: 'aws root', system: 'prod-aws', account_type: 'aws-root', rotate_by: '2020-01-01T00:00:00Z' }),
    updated: { rotate_by: '2020-01-01T00:00:00Z', expired: true, username: 'root' },
    invalid: [{ system: 'x', account_type: 'superuser', password: 'p' }],
  },
  service_config: {
    create: () => ({ kind: 'generic', service: 'billing', settings: { region: 'eu-west-1' }, secret_settings: { api_key: canary('svc') } }),
    update: () => ({ name: 'billing', kind: 'generic', service: 'billing-v2' }),
    updated: { service: 'billing-v2', settings: undefined },
    invalid: [
      { kind: 'generic' },
      { kind: 'database-role', connection_id: '00000000-0000-7000-8000-000000000001', creation_statements: ['CREATE ROLE x'] },
    ],
  },
  social_credential: {
    create: () => ({ platform: 'github', username: 'acme-bot', password: canary('social') }),
    update: () => ({ name: 'bot', platform: 'github', username: 'acme-bot2', email: 'bot@example.test' }),
    updated: { username: 'acme-bot2', email: 'bot@example.test' },
    invalid: [{ platform: 'myspace', username: 'u', password: 'p' }],
  },
  software_license: {
    create: () => ({ product: 'IntelliJ IDEA', license_key: canary('lic'), seats: 10, expires_at: future() }),
    update: () => ({ name: 'idea', product: 'IntelliJ IDEA Ultimate', seats: 20 }),
    updated: { product: 'IntelliJ IDEA Ultimate', seats: 20, expires_at: undefined, expired: false },
    invalid: [
      { product: 'x', license_key: 'k', seats: 0 },
      { product: 'x', license_key: 'k', expires_at: 'tomorrow' },
    ],
  },
  totp_token: {
    create: () => ({ issuer: 'ACME', account: 'alice@example.test', secret: remember(base32()) }),
    update: () => ({ name: 'acme', account: 'bob@example.test', digits: 8 }),
    updated: { account: 'bob@example.test', digits: 8, issuer: undefined, period: 30 },
    invalid: [
      { account: 'a', secret: 'not base32!' },
      { account: 'a', secret: 'JBSWY3DPEHPK3PXP', digits: 9 },
    ],
  },
  vpn_credential: {
    create: () => ({ protocol: 'openvpn', server: 'vpn.example.test', username: 'alice', password: canary('vpn') }),
    update: () => ({ name: 'vpn', protocol: 'openvpn', server: 'vpn2.example.test', username: 'alice' }),
    updated: { server: 'vpn2.example.test' },
    invalid: [{ protocol: 'wireguard', server: 'vpn.example.test', username: 'x', password: 'p' }],
  },
  wifi_credential: {
    create: () => ({ ssid: 'ACME-Guest', security: 'wpa2-personal', passphrase: canary('wifi') }),
    update: () => ({ name: 'guest wifi', ssid: 'ACME-Guest', security: 'wpa3-personal', hidden: true }),
    updated: { security: 'wpa3-personal', hidden: true },
    invalid: [
      { ssid: 'x', security: 'wpa2-personal', passphrase: 'short' },
      { ssid: 'x'.repeat(33), security: 'open' },
      { ssid: 'x', security: 'open', passphrase: 'whatever1' },
    ],
  },
  windows_credential: {
    create: () => ({ target: 'fileserver.corp.example.test', domain: 'CORP', username: 'alice', password: canary('win') }),
    update: () => ({ name: 'fs', target: 'fileserver2.corp.example.test', username: 'alice' }),
    updated: { target: 'fileserver2.corp.example.test', domain: undefined, persist: 'local-machine' },
    invalid: [{ target: 't', username: 'u', password: 'p', persist: 'forever' }],
  },
  yubikey: {
    create: () => ({ public_id: toModhex(randomBytes(6)), private_id: remember(hex(6)), aes_key: remember(hex(16)), serial: 1234567 }),
    update: (c) => ({ name: 'yk', public_id: c.public_id, serial: 7654321, slot: 2 }),
    updated: { serial: 7654321, slot: 2 },
    invalid: [{ public_id: 'xyz', private_id: '00', aes_key: '00' }],
  },
  password: {
    create: () => ({ username: 'alice', password: canary('pw'), url: 'https://example.test/login', notes: canary('notes') }),
    update: () => ({ name: 'site', username: 'alice2', url: 'https://example.test/' }),
    updated: { username: 'alice2', url: 'https://example.test/' },
    invalid: [{ password: 42 }, { password: 'p', url: 'javascript:alert(1)' }],
  },
  crypto_wallet: {
    create: () => ({ chain: 'ethereum', mnemonic: MNEMONIC, passphrase: canary('bip39') }),
    update: () => ({ label: 'cold storage' }),
    updated: { label: 'cold storage', chain: 'ethereum', derivation_path: "m/44'/60'/0'/0/0" },
    invalid: [
      { chain: 'dogecoin', mnemonic: MNEMONIC },
      { chain: 'bitcoin', mnemonic: 'abandon abandon abandon' },
      { chain: 'bitcoin', mnemonic: MNEMONIC, private_key: hex(32) },
    ],
  },
};


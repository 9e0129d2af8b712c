import { execFileSync } from 'node:child_process';
import { createPrivateKey, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as OTPAuth from 'otpauth';
import { beforeAll, describe, expect, it } from 'vitest';
import { dataOf, errorOf, idempotency } from '../../client/index.js';
import { api, canary, errorCode, newAccount, unique, type TestAccount } from '../helpers/api.js';
import { client } from '../helpers/client.js';
import { expectNotStored, opensslCert, pemBody, yubikeyDevice } from './credentials-helpers.js';

/**
 * The format-real extras of the typed credentials: TOTP (RFC 6238 vectors, otpauth://
 * import and export), Yubico OTP validation with replay refusal, JKS keystores exported as
 * PKCS#12 and listed by keytool, code-signing key export rules, the integration catalogue
 * and database roles, crypto wallet address derivation.
 */
let a: TestAccount;
let b: TestAccount;
beforeAll(async () => {
  [a, b] = await Promise.all([newAccount('fmt-a'), newAccount('fmt-b')]);
});

const base32Of = (ascii: string) => new OTPAuth.Secret({ buffer: new Uint8Array(Buffer.from(ascii, 'ascii')).buffer }).base32;

describe('totp-tokens', () => {
  // RFC 6238 Appendix B: T (seconds) → 8-digit codes for SHA1, SHA256, SHA512
  const SECRETS = {
    SHA1: '12345678901234567890',
    SHA256: '12345678901234567890123456789012',
    SHA512: '1234567890123456789012345678901234567890123456789012345678901234',
  };
  const VECTORS: [number, string, string, string][] = [
    [59, '94287082', '46119246', '90693936'],
    [1111111109, '07081804', '68084774', '25091201'],
    [1111111111, '14050471', '67062674', '99943326'],
    [1234567890, '89005924', '91819424', '93441116'],
    [2000000000, '69279037', '90698825', '38618901'],
    [20000000000, '65353130', '77737706', '47863826'],
  ];

  it('POST /{id}/generate reproduces the RFC 6238 test vectors for SHA1, SHA256 and SHA512', async () => {
    const key = await a.key(['credentials:read', 'credentials:write']);
    const ids: Record<string, string> = {};
    for (const [algorithm, secret] of Object.entries(SECRETS)) {
      const res = await api('POST', '/api/v1/totp-tokens', {
        key,
        body: { name: `rfc6238-${algorithm}`, account: 'rfc', secret: base32Of(secret), algorithm, digits: 8 },
      });
      expect(res.status, res.text).toBe(201);
      ids[algorithm] = res.body.data.totp_token.id;
    }
    const reader = await a.key(['credentials:read']);
    for (const [t, ...codes] of VECTORS) {
      for (const [i, algorithm] of ['SHA1', 'SHA256', 'SHA512'].entries()) {
        const res = await api('POST', `/api/v1/totp-tokens/${ids[algorithm]}/generate`, { key: reader, body: { at: t } });
        expect(res.status).toBe(200);
        expect(res.body.data.code, `${algorithm} T=${t}`).toBe(codes[i]);
        expect(res.body.data.seconds_remaining).toBe(30 - (t % 30));
      }
    }
    const iso = await api('POST', `/api/v1/totp-tokens/${ids.SHA1}/generate`, { key: reader, body: { at: '2005-03-18T01:58:29Z' } });
    expect(iso.body.data.code).toBe('07081804');
  });

  it('generates the current code with the seconds it stays valid', async () => {
    const key = a.adminKey;
    const secret = 'JBSWY3DPEHPK3PXPJBSWY3DP';
    const made = await api('POST', '/api/v1/totp-tokens', { key, body: { name: 'now', account: 'alice', secret } });
    const res = await api('POST', `/api/v1/totp-tokens/${made.body.data.totp_token.id}/generate`, { key });
    expect(res.status).toBe(200);
    expect(res.body.data.code).toMatch(/^\d{6}$/);
    expect(res.body.data.seconds_remaining).toBeGreaterThanOrEqual(1);
    expect(res.body.data.seconds_remaining).toBeLessThanOrEqual(30);
    const expected = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate({ timestamp: Date.parse(res.body.data.valid_from) });
    expect(res.body.data.code).toBe(expected);
    expect((await api('POST', `/api/v1/totp-tokens/${made.body.data.totp_token.id}/generate`, { key, body: { at: -1 } })).status).toBe(400);
    expect((await api('POST', `/api/v1/totp-tokens/${made.body.data.totp_token.id}/generate`, { key: b.adminKey })).status).toBe(404);
  });

  it('imports an otpauth:// URI and a batch, and exports the URI with a QR code PNG', async () => {
    const key = await a.key(['credentials:read', 'credentials:write']);
    const secret = base32Of(
      randomBytes(20)
        .toString('latin1')
        .replace(/[^\x20-\x7e]/g, 'x'),
    );
    const uri = `otpauth://totp/GitHub:alice%40example.test?secret=${secret}&issuer=GitHub&algorithm=SHA256&digits=8&period=60`;
    const one = await client(key).POST('/api/v1/totp-tokens/import', { body: { uri }, headers: idempotency() });
    expect(one.response.status, JSON.stringify(one.error)).toBe(201);
    const t = dataOf(one).totp_tokens[0]!;
    expect(t).toMatchObject({
      name: 'GitHub:alice@example.test',
      issuer: 'GitHub',
      account: 'alice@example.test',
      algorithm: 'SHA256',
      digits: 8,
      period: 60,
      secret,
    });

    const path = { path: { id: t.id as string } };
    const exported = await client(await a.key(['credentials:read'])).GET('/api/v1/totp-tokens/{id}/export', { params: path });
    expect(exported.response.status).toBe(200);
    const back = OTPAuth.URI.parse(dataOf(exported).uri) as OTPAuth.TOTP;
    expect([back.issuer, back.label, back.secret.base32, back.algorithm, back.digits, back.period]).toEqual([
      'GitHub',
      'alice@example.test',
      secret,
      'SHA256',
      8,
      60,
    ]);
    expect(Buffer.from(dataOf(exported).qr_png_base64!, 'base64').subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
    const noQr = await client(key).GET('/api/v1/totp-tokens/{id}/export', { params: { ...path, query: { qr: 'false' } } });
    expect(dataOf(noQr).qr_png_base64).toBeNull();
    expect(errorOf(await client(b.adminKey).GET('/api/v1/totp-tokens/{id}/export', { params: path }))).toMatchObject({
      status: 404,
      code: 'not_found',
    });

    const batch = await api('POST', '/api/v1/totp-tokens/import', {
      key,
      body: { uris: [`otpauth://totp/A:x?secret=${secret}&issuer=A`, `otpauth://totp/y?secret=${secret}`], tags: ['imported'] },
    });
    expect(batch.status).toBe(201);
    expect(batch.body.data.totp_tokens.map((x: { name: string }) => x.name)).toEqual(['A:x', 'y']);
    await expectNotStored([secret]);
  });

  it('refuses a batch with one bad URI as a whole, HOTP URIs, and URIs without a valid secret', async () => {
    const key = a.adminKey;
    const before = (await api('GET', '/api/v1/totp-tokens?limit=1000', { key })).body.data.totp_tokens.length;
    const bad = [
      { uris: ['otpauth://totp/ok?secret=JBSWY3DPEHPK3PXP', 'otpauth://hotp/h?secret=JBSWY3DPEHPK3PXP&counter=1'] },
      { uri: 'otpauth://totp/x?secret=short' },
      { uri: 'otpauth://totp/x' },
      { uri: 'https://example.test/?secret=JBSWY3DPEHPK3PXP' },
      { uri: 'otpauth://totp/x?secret=JBSWY3DPEHPK3PXP&digits=12' },
      { uris: [] },
    ];
    for (const body of bad) {
      const res = await api('POST', '/api/v1/totp-tokens/import', { key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect((await api('GET', '/api/v1/totp-tokens?limit=1000', { key })).body.data.totp_tokens.length).toBe(before);
  });
});

describe('yubikeys: Yubico OTP validation', () => {
  it('accepts an OTP once, refuses its replay and any older counter, accepts newer ones', async () => {
    const device = yubikeyDevice();
    const key = await a.key(['credentials:read', 'credentials:write']);
    const made = await api('POST', '/api/v1/yubikeys', {
      key,
      body: {
        name: 'alice yk',
        public_id: device.publicId,
        private_id: device.privateId.toString('hex'),
        aes_key: device.aesKey.toString('hex'),
        serial: 9000001,
      },
    });
    expect(made.status, made.text).toBe(201);
    const id = made.body.data.yubikey.id;
    const reader = await a.key(['credentials:read']);
    const validate = (otp: string, k = reader) => api('POST', `/api/v1/yubikeys/${id}/validate`, { key: k, body: { otp } });

    const first = device.otp(5, 0);
    const ok1 = await validate(first);
    expect(ok1.status, ok1.text).toBe(200);
    expect(ok1.body.data).toMatchObject({
      valid: true,
      status: 'OK',
      public_id: device.publicId,
      usage_counter: 5,
      session_counter: 0,
      counter: 5 * 256,
    });

    const replay = await validate(first);
    expect(replay.status).toBe(409);
    expect(errorCode(replay)).toBe('otp_replayed');

    expect((await validate(device.otp(5, 1))).status).toBe(200); // same session, next use
    expect((await validate(device.otp(6, 0))).status).toBe(200); // next power-up
    const older = await validate(device.otp(5, 7));
    expect(older.status).toBe(409);
    expect(errorCode(older)).toBe('otp_replayed');

    // an OTP of another key with the same public id, a tampered OTP, another device's OTP
    const forged = yubikeyDevice();
    const fake = device.publicId + forged.otp(9, 0).slice(-32);
    const other = yubikeyDevice().otp(9, 0);
    const flipped = first.slice(0, -1) + (first.endsWith('c') ? 'b' : 'c');
    for (const otp of [fake, other, flipped]) {
      const res = await validate(otp);
      expect(res.status).toBe(400);
      expect(errorCode(res)).toBe('otp_invalid');
    }
    expect((await validate('not-modhex-at-all-xxxxxxxxxxxxxxxxxxxxxx')).status).toBe(400);
    expect((await validate(device.otp(7, 0), b.adminKey)).status).toBe(404);
    expect((await validate(device.otp(7, 0))).status).toBe(200);
    await expectNotStored([device.aesKey.toString('hex'), device.privateId.toString('hex')]);
  });

  it('the counter goes with the credential: deleted, then a new credential for the key starts fresh', async () => {
    const device = yubikeyDevice();
    const body = { name: 'yk', public_id: device.publicId, private_id: device.privateId.toString('hex'), aes_key: device.aesKey.toString('hex') };
    const first = await api('POST', '/api/v1/yubikeys', { key: a.adminKey, body });
    const otp = device.otp(1, 0);
    expect((await api('POST', `/api/v1/yubikeys/${first.body.data.yubikey.id}/validate`, { key: a.adminKey, body: { otp } })).status).toBe(200);
    expect((await api('DELETE', `/api/v1/yubikeys/${first.body.data.yubikey.id}`, { key: a.adminKey })).status).toBe(200);
    expect(
      (await api('POST', `/api/v1/yubikeys/${first.body.data.yubikey.id}/validate`, { key: a.adminKey, body: { otp: device.otp(2, 0) } })).status,
    ).toBe(404);
    const again = await api('POST', '/api/v1/yubikeys', { key: a.adminKey, body });
    expect(
      (await api('POST', `/api/v1/yubikeys/${again.body.data.yubikey.id}/validate`, { key: a.adminKey, body: { otp: device.otp(2, 0) } })).status,
    ).toBe(200);
  });
});

describe('jks-keystores', () => {
  const server = opensslCert('server.example.test', 'rsa');
  const client = opensslCert('client.example.test', 'ec');
  const root = opensslCert('Example Root CA', 'ec');
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'jks-test-'));
    return () => rmSync(dir, { recursive: true, force: true });
  });

  it('entries are added, listed and removed; the PKCS#12 export is listed by keytool', async () => {
    const writer = await a.key(['credentials:read', 'credentials:write']);
    const password = canary('store');
    const made = await api('POST', '/api/v1/jks-keystores', {
      key: writer,
      body: {
        name: 'tls',
        store_password: password,
        entries: [{ kind: 'private-key', alias: 'Server', private_key: server.key, certificate_chain: server.cert }],
      },
    });
    expect(made.status, made.text).toBe(201);
    const ks = made.body.data.jks_keystore;
    expect(ks.entries).toHaveLength(1);
    expect(ks.entries[0]).toMatchObject({ alias: 'server', kind: 'private-key', subject: 'CN=server.example.test', key_algorithm: 'RSA' });
    expect(ks.secret_fields.sort()).toEqual(['private_keys', 'store_password']);
    expect(made.text).not.toContain(pemBody(server.key));

    let etag = made.headers.get('etag')!;
    const add = await api('POST', `/api/v1/jks-keystores/${ks.id}/entries`, {
      key: writer,
      body: { kind: 'private-key', alias: 'client', private_key: client.key, certificate_chain: client.cert },
      headers: { 'if-match': etag },
    });
    expect(add.status, add.text).toBe(201);
    expect(add.body.data.entry).toMatchObject({ alias: 'client', key_algorithm: 'EC' });
    const stale = await api('POST', `/api/v1/jks-keystores/${ks.id}/entries`, {
      key: writer,
      body: { kind: 'trusted-certificate', alias: 'root', certificate: root.cert },
      headers: { 'if-match': etag },
    });
    expect(stale.status).toBe(409);
    etag = add.headers.get('etag')!;
    expect(
      (
        await api('POST', `/api/v1/jks-keystores/${ks.id}/entries`, {
          key: writer,
          body: { kind: 'trusted-certificate', alias: 'root', certificate: root.cert },
          headers: { 'if-match': etag },
        })
      ).status,
    ).toBe(201);
    const dup = await api('POST', `/api/v1/jks-keystores/${ks.id}/entries`, {
      key: writer,
      body: { kind: 'trusted-certificate', alias: 'root', certificate: root.cert },
    });
    expect(dup.status).toBe(409);
    expect(errorCode(dup)).toBe('already_exists');
    const mismatch = await api('POST', `/api/v1/jks-keystores/${ks.id}/entries`, {
      key: writer,
      body: { kind: 'private-key', alias: 'bad', private_key: client.key, certificate_chain: server.cert },
    });
    expect(mismatch.status).toBe(400);

    const reader = await a.key(['credentials:read']);
    const entries = await api('GET', `/api/v1/jks-keystores/${ks.id}/entries`, { key: reader });
    expect(entries.body.data.entries.map((e: { alias: string; kind: string }) => `${e.alias}:${e.kind}`)).toEqual([
      'server:private-key',
      'client:private-key',
      'root:trusted-certificate',
    ]);
    const got = await api('GET', `/api/v1/jks-keystores/${ks.id}`, { key: reader });
    expect(got.body.data.jks_keystore.store_password).toBe(password);
    for (const k of [server.key, client.key]) {
      expect(got.text).not.toContain(pemBody(k));
      expect(entries.text).not.toContain(pemBody(k));
    }

    // partial PUT: the password changes, entries stay
    const newPassword = canary('store2');
    const put = await api('PUT', `/api/v1/jks-keystores/${ks.id}`, {
      key: writer,
      body: { store_password: newPassword },
      headers: { 'if-match': got.headers.get('etag')! },
    });
    expect(put.status).toBe(200);
    expect(put.body.data.jks_keystore).toMatchObject({ name: 'tls', store_password: newPassword });
    expect(put.body.data.jks_keystore.entries).toHaveLength(3);

    expect((await api('GET', `/api/v1/jks-keystores/${ks.id}/export`, { key: reader })).status).toBe(403); // export:read
    const exported = await api('GET', `/api/v1/jks-keystores/${ks.id}/export`, { key: await a.key(['credentials:read', 'export:read']) });
    expect(exported.status, exported.text).toBe(200);
    expect(exported.body.data).toMatchObject({ format: 'pkcs12', filename: 'tls.p12', entries: 3 });
    const file = join(dir, 'tls.p12');
    writeFileSync(file, Buffer.from(exported.body.data.keystore_base64, 'base64'));
    const listing = execFileSync('keytool', ['-list', '-keystore', file, '-storetype', 'PKCS12', '-storepass', newPassword], { encoding: 'utf8' });
    expect(listing).toContain('Your keystore contains 3 entries');
    expect(listing).toMatch(/^server, .*PrivateKeyEntry/m);
    expect(listing).toMatch(/^client, .*PrivateKeyEntry/m);
    expect(listing).toMatch(/^root, .*trustedCertEntry/m);
    expect(() => execFileSync('keytool', ['-list', '-keystore', file, '-storetype', 'PKCS12', '-storepass', password], { stdio: 'pipe' })).toThrow();
    // the private key inside is the one imported
    const der = execFileSync('openssl', ['pkcs12', '-in', file, '-nocerts', '-nodes', '-passin', `pass:${newPassword}`], { encoding: 'utf8' });
    const firstKey = der.match(/-----BEGIN PRIVATE KEY-----[\s\S]+?-----END PRIVATE KEY-----/g)!;
    const exportedKeys = firstKey.map((k) => createPrivateKey(k).export({ type: 'pkcs8', format: 'pem' }));
    expect(exportedKeys).toContain(createPrivateKey(server.key).export({ type: 'pkcs8', format: 'pem' }));

    const removed = await api('DELETE', `/api/v1/jks-keystores/${ks.id}/entries/client`, { key: writer });
    expect(removed.status).toBe(200);
    expect((await api('DELETE', `/api/v1/jks-keystores/${ks.id}/entries/client`, { key: writer })).status).toBe(404);
    expect((await api('GET', `/api/v1/jks-keystores/${ks.id}/entries`, { key: reader })).body.data.total).toBe(2);
    for (const [m, p] of [
      ['GET', 'entries'],
      ['GET', 'export'],
      ['DELETE', 'entries/root'],
    ] as const) {
      expect((await api(m, `/api/v1/jks-keystores/${ks.id}/${p}`, { key: b.adminKey })).status).toBe(404);
    }
    await expectNotStored([pemBody(server.key), pemBody(client.key)]);
  });
});

describe('code-signing-keys', () => {
  const imported = opensslCert('ACME Code Signing', 'rsa', ['-addext', 'extendedKeyUsage=codeSigning']);
  const other = opensslCert('Other', 'ec');

  it('export gives public material; the private key only for an exportable imported key and on request', async () => {
    const key = await a.key(['credentials:read', 'credentials:write', 'export:read']);
    const made = await api('POST', '/api/v1/code-signing-keys', {
      key,
      body: { name: 'release', private_key: imported.key, certificate_chain: imported.cert, exportable: true, platform: 'java-jar' },
    });
    expect(made.status, made.text).toBe(201);
    const k = made.body.data.code_signing_key;
    expect(k).toMatchObject({
      backend: 'software',
      origin: 'imported',
      algorithm: 'RSA',
      key_size: 2048,
      exportable: true,
      certificate_subject: 'CN=ACME Code Signing',
    });
    expect(k).not.toHaveProperty('private_key');
    expect(made.text).not.toContain(pemBody(imported.key));
    const got = await api('GET', `/api/v1/code-signing-keys/${k.id}`, { key });
    expect(got.text).not.toContain(pemBody(imported.key));

    const pub = await api('GET', `/api/v1/code-signing-keys/${k.id}/export`, { key });
    expect(pub.status).toBe(200);
    expect(pub.body.data.code_signing_key.public_key).toContain('BEGIN PUBLIC KEY');
    expect(pub.body.data.code_signing_key.certificate_chain).toContain('BEGIN CERTIFICATE');
    expect(pub.body.data.code_signing_key).not.toHaveProperty('private_key');
    const full = await api('GET', `/api/v1/code-signing-keys/${k.id}/export?include_private_key=true`, { key });
    expect(full.status).toBe(200);
    expect(createPrivateKey(full.body.data.code_signing_key.private_key).export({ type: 'pkcs8', format: 'pem' })).toBe(
      createPrivateKey(imported.key).export({ type: 'pkcs8', format: 'pem' }),
    );
    expect((await api('GET', `/api/v1/code-signing-keys/${k.id}/export`, { key: await a.key(['credentials:read']) })).status).toBe(403);
    expect((await api('GET', `/api/v1/code-signing-keys/${k.id}/export`, { key: b.adminKey })).status).toBe(404);

    const generated = await api('POST', '/api/v1/code-signing-keys', { key, body: { name: 'gen', generate: 'ed25519' } });
    expect(generated.body.data.code_signing_key).toMatchObject({ origin: 'generated', algorithm: 'Ed25519', exportable: false });
    const refused = await api('GET', `/api/v1/code-signing-keys/${generated.body.data.code_signing_key.id}/export?include_private_key=true`, { key });
    expect(refused.status).toBe(403);
    expect(errorCode(refused)).toBe('not_exportable');
    const notExportable = await api('POST', '/api/v1/code-signing-keys', { key, body: { name: 'ne', private_key: other.key } });
    expect(
      (await api('GET', `/api/v1/code-signing-keys/${notExportable.body.data.code_signing_key.id}/export?include_private_key=true`, { key })).status,
    ).toBe(403);
    await expectNotStored([pemBody(imported.key), pemBody(other.key)]);
  });

  it('refuses a certificate of another key, on create and on PUT; PUT renews the chain of the same key', async () => {
    const key = a.adminKey;
    expect(
      (await api('POST', '/api/v1/code-signing-keys', { key, body: { name: 'x', private_key: imported.key, certificate_chain: other.cert } })).status,
    ).toBe(400);
    expect(
      (await api('POST', '/api/v1/code-signing-keys', { key, body: { name: 'x', private_key: imported.key, generate: 'ed25519' } })).status,
    ).toBe(400);
    const made = await api('POST', '/api/v1/code-signing-keys', { key, body: { name: 'x', private_key: imported.key } });
    const id = made.body.data.code_signing_key.id;
    const headers = { 'if-match': made.headers.get('etag')! };
    expect((await api('PUT', `/api/v1/code-signing-keys/${id}`, { key, body: { certificate_chain: other.cert }, headers })).status).toBe(400);
    const renewed = await api('PUT', `/api/v1/code-signing-keys/${id}`, { key, body: { certificate_chain: imported.cert }, headers });
    expect(renewed.status).toBe(200);
    expect(renewed.body.data.code_signing_key).toMatchObject({ certificate_subject: 'CN=ACME Code Signing', expired: false });
    const after = { 'if-match': renewed.headers.get('etag')! };
    expect((await api('PUT', `/api/v1/code-signing-keys/${id}`, { key, body: { exportable: true }, headers: after })).status).toBe(400);
  });
});

describe('integration-providers and database roles', () => {
  it("lists the catalogue with each provider's fields and secret fields", async () => {
    const res = await api('GET', '/api/v1/integration-providers', { key: await a.key(['credentials:read']) });
    expect(res.status).toBe(200);
    const byId = Object.fromEntries(res.body.data.providers.map((p: { id: string }) => [p.id, p]));
    for (const id of ['postgresql', 'mysql', 'mariadb', 'ldap', 'ipfs', 'stripe', 'pkcs11', 'aws-cloudhsm']) expect(byId[id], id).toBeDefined();
    expect(byId.postgresql).toMatchObject({ category: 'database', secret_fields: ['password', 'tls_client_key'] });
    expect(byId.postgresql.required.sort()).toEqual(['database', 'host', 'password', 'username']);
    expect(byId.postgresql.fields.port).toMatchObject({ type: 'integer', default: 5432 });
    expect(byId.postgresql.fields.tls_mode.enum).toEqual(['disable', 'require', 'verify-ca', 'verify-full']);
    const dbs = await api('GET', '/api/v1/integration-providers?category=database', { key: a.adminKey });
    expect(dbs.body.data.providers.every((p: { category: string }) => p.category === 'database')).toBe(true);
    expect((await api('GET', '/api/v1/integration-providers?category=nope', { key: a.adminKey })).status).toBe(400);
  });

  it('a database-role service config needs a database integration of the account, TTLs in order and {{name}}', async () => {
    const key = a.adminKey;
    const pg = await api('POST', '/api/v1/integrations', {
      key,
      body: { name: 'pg', provider: 'mariadb', host: '127.0.0.1', database: 'mysql', username: 'root', password: canary('db'), tls_mode: 'disable' },
    });
    expect(pg.status, pg.text).toBe(201);
    const ldap = await api('POST', '/api/v1/integrations', {
      key,
      body: { name: 'dir', provider: 'ldap', url: 'ldap://ldap.example.test', bind_dn: 'cn=a', password: canary('l'), base_dn: 'dc=x' },
    });
    const role = {
      name: 'readonly',
      kind: 'database-role',
      connection_id: pg.body.data.integration.id,
      creation_statements: ["CREATE USER '{{name}}'@'%' IDENTIFIED BY '{{password}}'", "GRANT SELECT ON app.* TO '{{name}}'@'%'"],
      revocation_statements: ["DROP USER '{{name}}'@'%'"],
      default_ttl_seconds: 3600,
      max_ttl_seconds: 86400,
    };
    const ok = await api('POST', '/api/v1/service-config', { key, body: role });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.data.service_config).toMatchObject({
      kind: 'database-role',
      connection_id: pg.body.data.integration.id,
      default_ttl_seconds: 3600,
    });
    const otherAccountPg = await api('POST', '/api/v1/integrations', {
      key: b.adminKey,
      body: { name: 'pg', provider: 'postgresql', host: 'h.example.test', database: 'd', username: 'u', password: canary('b') },
    });
    for (const bad of [
      { ...role, connection_id: ldap.body.data.integration.id },
      { ...role, connection_id: otherAccountPg.body.data.integration.id },
      { ...role, default_ttl_seconds: 90000 },
      { ...role, creation_statements: ['CREATE USER x'] },
    ]) {
      expect((await api('POST', '/api/v1/service-config', { key, body: bad })).status).toBe(400);
    }
    const kindChange = await api('PUT', `/api/v1/service-config/${ok.body.data.service_config.id}`, {
      key,
      body: { name: 'x', kind: 'generic', service: 's' },
      headers: { 'if-match': ok.headers.get('etag')! },
    });
    expect(kindChange.status).toBe(400);
    expect(errorCode(kindChange)).toBe('immutable_field');
  });
});

describe('crypto-wallets', () => {
  const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
  // BIP-84 / BIP-44 test vectors of the all-"abandon" mnemonic
  const VECTORS = [
    { chain: 'bitcoin', address: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu' },
    { chain: 'bitcoin', address_type: 'p2pkh', address: '1LqBGSKuX5yYUonjxT5qGfpUsXKYYWeabA' },
    { chain: 'ethereum', address: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94' },
  ];

  it('derives Bitcoin (BIP-84, BIP-44) and Ethereum addresses from the mnemonic and accepts matching ones', async () => {
    const key = await a.key(['passwords:read', 'passwords:write']);
    for (const v of VECTORS) {
      const { address, ...rest } = v;
      const derived = await api('POST', '/api/v1/crypto-wallets', { key, body: { name: unique('w'), mnemonic: MNEMONIC, ...rest } });
      expect(derived.status, derived.text).toBe(201);
      expect(derived.body.data.crypto_wallet.address).toBe(address);
      const given = await api('POST', '/api/v1/crypto-wallets', { key, body: { name: unique('w'), mnemonic: MNEMONIC, ...v } });
      expect(given.status, given.text).toBe(201);
    }
    const lower = await api('POST', '/api/v1/crypto-wallets', {
      key,
      body: { name: 'lc', chain: 'ethereum', mnemonic: MNEMONIC, address: VECTORS[2]!.address.toLowerCase() },
    });
    expect(lower.body.data.crypto_wallet.address).toBe(VECTORS[2]!.address);
  });

  it('refuses an address that does not match its mnemonic, passphrase or private key (400)', async () => {
    const key = a.adminKey;
    const eth = VECTORS[2]!.address;
    for (const body of [
      { chain: 'bitcoin', mnemonic: MNEMONIC, address: '1LqBGSKuX5yYUonjxT5qGfpUsXKYYWeabA' }, // p2pkh address for a p2wpkh wallet
      { chain: 'ethereum', mnemonic: MNEMONIC, passphrase: canary('pp'), address: eth },
      { chain: 'ethereum', mnemonic: MNEMONIC, derivation_path: "m/44'/60'/0'/0/1", address: eth },
      { chain: 'ethereum', private_key: randomBytes(32).toString('hex'), address: eth },
      { chain: 'ethereum', mnemonic: MNEMONIC, address: eth.replace('E', 'e') }, // bad EIP-55 checksum
      { chain: 'bitcoin', mnemonic: MNEMONIC.replace('about', 'abandon') }, // bad BIP-39 checksum
    ]) {
      const res = await api('POST', '/api/v1/crypto-wallets', { key, body: { name: 'bad', ...body } });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.text).not.toContain('CANARY');
    }
  });

  it('a private key derives its address; PUT changes the label only', async () => {
    const key = a.adminKey;
    const made = await api('POST', '/api/v1/crypto-wallets', { key, body: { name: 'pk', chain: 'ethereum', private_key: '0x' + '11'.repeat(32) } });
    expect(made.status, made.text).toBe(201);
    expect(made.body.data.crypto_wallet.address).toBe('0x19E7E376E7C213B7E7e7e46cc70A5dD086DAff2A');
    const id = made.body.data.crypto_wallet.id;
    const labelled = await api('PUT', `/api/v1/crypto-wallets/${id}`, {
      key,
      body: { label: 'hot' },
      headers: { 'if-match': made.headers.get('etag')! },
    });
    expect(labelled.body.data.crypto_wallet).toMatchObject({ label: 'hot', address: made.body.data.crypto_wallet.address });
    const headers = { 'if-match': labelled.headers.get('etag')! };
    expect((await api('PUT', `/api/v1/crypto-wallets/${id}`, { key, body: { address: VECTORS[2]!.address }, headers })).status).toBe(400);
  });
});

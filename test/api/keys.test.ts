import { execFileSync } from 'node:child_process';
import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { api, canary, errorCode, newAccount, unique, type TestAccount } from '../helpers/api.js';
import { findLeaks } from '../helpers/leaks.js';
import * as openpgp from 'openpgp';
import sshpk from 'sshpk';
import { gpgScalar, materialProbes, probes } from './keys-helpers.js';

/**
 * SSH, GPG and OpenSSL keys through real HTTP, every artifact checked by an independent
 * tool: ssh-keygen on OpenSSH exports, gpg on armored exports, openssl on PEM.
 */
let a: TestAccount;
let b: TestAccount;
let dir: string;
/** Probes of the private keys exported in these tests: never in the table in plaintext (keys-helpers.ts). */
const exported: string[] = [];
const track = (material: string) => exported.push(...materialProbes(material));
const trackGpg = async (armored: string) => exported.push(...probes(await gpgScalar(armored)));

const run = (cmd: string, args: string[], input?: string) => execFileSync(cmd, args, { input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
const file = (name: string, content: string | Buffer, mode = 0o600) => {
  const p = join(dir, name);
  writeFileSync(p, content, { mode });
  return p;
};
beforeAll(async () => {
  [a, b] = await Promise.all([newAccount('keys-a'), newAccount('keys-b')]);
  dir = mkdtempSync(join(tmpdir(), 'keys-test-'));
});

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  // the private material exported above is nowhere in the table in plaintext
  const leaks = await findLeaks({ dynamoEndpoint: inject('dynamoEndpoint'), tableName: inject('tableName'), logText: '', extra: exported });
  expect(leaks).toEqual([]);
});

describe('SSH keys', () => {
  it.each([
    ['ed25519', undefined, 256, 'ED25519'],
    ['ecdsa', 256, 256, 'ECDSA'],
    ['ecdsa', 384, 384, 'ECDSA'],
    ['rsa', 3072, 3072, 'RSA'],
    ['rsa', 4096, 4096, 'RSA'],
  ] as const)('generates %s %s: ssh-keygen -l reads the export with the same fingerprint', async (algorithm, bits, size, label) => {
    const writer = await a.key(['ssh:read', 'ssh:write', 'export:read']);
    const res = await api('POST', '/api/v1/ssh-keys/generate', {
      key: writer,
      body: { name: unique('ssh'), algorithm, ...(bits ? { bits } : {}), comment: 'deploy@ci' },
    });
    expect(res.status, res.text).toBe(201);
    const key = res.body.data.ssh_key;
    expect(key).toMatchObject({
      type: 'ssh_key',
      algorithm,
      bits: size,
      has_private_key: true,
      source: 'generated',
      comment: 'deploy@ci',
      expires_at: null,
    });
    expect(key.fingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    expect(JSON.stringify(res.body)).not.toMatch(/PRIVATE KEY/);

    const exp = await api('GET', `/api/v1/ssh-keys/${key.id}/export?private=true`, { key: writer });
    expect(exp.status, exp.text).toBe(200);
    const { private_key, public_key } = exp.body.data.export;
    expect(private_key).toMatch(/^-----BEGIN OPENSSH PRIVATE KEY-----/);
    track(private_key);
    const priv = file(`${key.id}`, private_key);
    const pub = file(`${key.id}.pub`, public_key);
    // `ssh-keygen -l` prints "<bits> <fingerprint> <comment> (<type>)"
    for (const f of [priv, pub]) expect(run('ssh-keygen', ['-l', '-f', f]).trim()).toBe(`${size} ${key.fingerprint} deploy@ci (${label})`);
    // the public key derived from the private key by ssh-keygen is the stored one
    expect(run('ssh-keygen', ['-y', '-f', priv]).trim().split(' ').slice(0, 2)).toEqual(key.public_key.split(' ').slice(0, 2));
    expect(public_key.trim()).toBe(key.public_key);
  });

  it('imports an encrypted OpenSSH key made by ssh-keygen with its passphrase; wrong or missing passphrase → 400', async () => {
    const writer = await a.key(['ssh:read', 'ssh:write']);
    const passphrase = canary('sshpass');
    const path = join(dir, unique('imp'));
    run('ssh-keygen', ['-q', '-t', 'ed25519', '-a', '4', '-N', passphrase, '-C', 'laptop', '-f', path]);
    const text = run('cat', [path]);
    track(sshpk.parsePrivateKey(text, 'openssh', { passphrase }).toString('openssh'));
    const want = run('ssh-keygen', ['-l', '-f', `${path}.pub`]).split(' ')[1];

    const wrong = await api('POST', '/api/v1/ssh-keys/import', {
      key: writer,
      body: { name: unique('imp'), private_key: text, passphrase: 'not-it' },
    });
    expect(wrong.status).toBe(400);
    expect(errorCode(wrong)).toBe('wrong_passphrase');
    expect(wrong.body.error).toMatch(/wrong passphrase/);
    const missing = await api('POST', '/api/v1/ssh-keys/import', { key: writer, body: { name: unique('imp'), private_key: text } });
    expect(missing.status).toBe(400);
    expect(errorCode(missing)).toBe('passphrase_required');

    const ok = await api('POST', '/api/v1/ssh-keys/import', { key: writer, body: { name: unique('imp'), private_key: text, passphrase } });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.data.ssh_key).toMatchObject({
      algorithm: 'ed25519',
      fingerprint: want,
      comment: 'laptop',
      source: 'imported',
      has_private_key: true,
    });
  });

  it('imports a PEM (PKCS#8) RSA key and a public key alone; corrupt input → 400 invalid_key', async () => {
    const writer = await a.key(['ssh:read', 'ssh:write']);
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 3072 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    track(pem);
    const res = await api('POST', '/api/v1/ssh-keys/import', { key: writer, body: { name: unique('pem'), private_key: pem } });
    expect(res.status, res.text).toBe(201);
    const pubFile = file('rsa.pub', `${res.body.data.ssh_key.public_key}\n`);
    expect(run('ssh-keygen', ['-l', '-f', pubFile]).split(' ')[1]).toBe(res.body.data.ssh_key.fingerprint);

    const pubOnly = await api('POST', '/api/v1/ssh-keys/import', {
      key: writer,
      body: { name: unique('pub'), public_key: res.body.data.ssh_key.public_key },
    });
    expect(pubOnly.status).toBe(201);
    expect(pubOnly.body.data.ssh_key).toMatchObject({ has_private_key: false, fingerprint: res.body.data.ssh_key.fingerprint });
    const noPriv = await api('GET', `/api/v1/ssh-keys/${pubOnly.body.data.ssh_key.id}/export?private=true`, { key: a.adminKey });
    expect(noPriv.status).toBe(400);
    expect(errorCode(noPriv)).toBe('no_private_key');

    for (const body of [
      { private_key: '-----BEGIN OPENSSH PRIVATE KEY-----\nAAAAnotakey\n-----END OPENSSH PRIVATE KEY-----\n' },
      { private_key: pem.replace(/[A-Za-z]{20}/, 'x') },
      { public_key: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI' },
    ]) {
      const bad = await api('POST', '/api/v1/ssh-keys/import', { key: writer, body: { name: unique('bad'), ...body } });
      expect(bad.status, bad.text).toBe(400);
      expect(errorCode(bad)).toBe('invalid_key');
    }
  });

  it('400 on bad generate/import bodies', async () => {
    const writer = await a.key(['ssh:read', 'ssh:write']);
    for (const body of [
      { name: unique('x'), algorithm: 'dsa' },
      { name: unique('x'), algorithm: 'rsa', bits: 1024 },
      { name: unique('x'), algorithm: 'ecdsa', bits: 255 },
      { name: unique('x'), extra: 1 },
      { name: '' },
      { name: unique('x'), comment: 'two\nlines' },
      { name: unique('x'), bits: '256' },
    ]) {
      const res = await api('POST', '/api/v1/ssh-keys/generate', { key: writer, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const both = await api('POST', '/api/v1/ssh-keys/import', { key: writer, body: { name: unique('x'), private_key: 'a', public_key: 'b' } });
    expect(both.status).toBe(400);
    const neither = await api('POST', '/api/v1/ssh-keys/import', { key: writer, body: { name: unique('x') } });
    expect(neither.status).toBe(400);
  });

  it('get and list show public parts only; handler scopes: ssh:read to read, export:read for the private key', async () => {
    const writer = await a.key(['ssh:read', 'ssh:write']);
    const gen = await api('POST', '/api/v1/ssh-keys/generate', { key: writer, body: { name: unique('scoped') } });
    const id = gen.body.data.ssh_key.id;
    const full = await api('GET', `/api/v1/ssh-keys/${id}/export?private=true`, { key: a.adminKey });
    expect(full.status).toBe(200);
    const priv = full.body.data.export.private_key as string;
    track(priv);

    const reader = await a.key(['ssh:read']);
    const get = await api('GET', `/api/v1/ssh-keys/${id}`, { key: reader });
    expect(get.status).toBe(200);
    expect(get.headers.get('etag')).toBe(`"${id}.1"`);
    const list = await api('GET', '/api/v1/ssh-keys?limit=1000', { key: reader });
    expect(list.status).toBe(200);
    expect(list.body.data.ssh_keys.map((k: { id: string }) => k.id)).toContain(id);
    for (const r of [get, list]) {
      for (const probe of materialProbes(priv)) expect(r.text).not.toContain(probe);
      expect(r.text).not.toMatch(/PRIVATE KEY/);
    }
    const pubExport = await api('GET', `/api/v1/ssh-keys/${id}/export`, { key: reader });
    expect(pubExport.status).toBe(200);
    expect(pubExport.body.data.export.private_key).toBeUndefined();

    const noExport = await api('GET', `/api/v1/ssh-keys/${id}/export?private=true`, { key: reader });
    expect(noExport.status).toBe(403);
    expect(errorCode(noExport)).toBe('insufficient_scope');
    const other = await a.key(['gpg:read']);
    for (const path of [`/api/v1/ssh-keys/${id}`, `/api/v1/ssh-keys/${id}/export`]) {
      const res = await api('GET', path, { key: other });
      expect(res.status).toBe(403);
      expect(errorCode(res)).toBe('insufficient_scope');
    }
    const badQuery = await api('GET', `/api/v1/ssh-keys/${id}/export?private=yes`, { key: a.adminKey });
    expect(badQuery.status).toBe(400);
  });

  it('another account sees 404 on get, export, update and delete', async () => {
    const gen = await api('POST', '/api/v1/ssh-keys/generate', { key: a.adminKey, body: { name: unique('mine') } });
    const id = gen.body.data.ssh_key.id;
    for (const [method, path] of [
      ['GET', `/api/v1/ssh-keys/${id}`],
      ['GET', `/api/v1/ssh-keys/${id}/export?private=true`],
      ['DELETE', `/api/v1/ssh-keys/${id}`],
    ] as const) {
      const res = await api(method, path, { key: b.adminKey });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(errorCode(res)).toBe('not_found');
    }
    // an update names the version it read: another account's key, like a missing one, has none (412; 428 without If-Match)
    const update = { key: b.adminKey, body: { description: 'x' }, headers: { 'if-match': `"${id}.1"` } };
    const put = await api('PUT', `/api/v1/ssh-keys/${id}`, update);
    const putMissing = await api('PUT', '/api/v1/ssh-keys/00000000-0000-7000-8000-000000000000', update);
    expect([put.status, errorCode(put)]).toEqual([412, 'precondition_failed']);
    expect(put.body.error).toBe(putMissing.body.error);
    const list = await api('GET', '/api/v1/ssh-keys', { key: b.adminKey });
    expect(list.body.data.ssh_keys.map((k: { id: string }) => k.id)).not.toContain(id);
  });

  it('updates metadata with If-Match and deletes', async () => {
    const writer = await a.key(['ssh:read', 'ssh:write']);
    const gen = await api('POST', '/api/v1/ssh-keys/generate', { key: writer, body: { name: unique('upd') } });
    const key = gen.body.data.ssh_key;
    const upd = await api('PUT', `/api/v1/ssh-keys/${key.id}`, {
      key: writer,
      body: { description: 'prod bastion', tags: ['prod'] },
      headers: { 'if-match': `"${key.id}.1"` },
    });
    expect(upd.status, upd.text).toBe(200);
    expect(upd.body.data.ssh_key).toMatchObject({ description: 'prod bastion', tags: ['prod'], version: 2, fingerprint: key.fingerprint });
    const stale = await api('PUT', `/api/v1/ssh-keys/${key.id}`, {
      key: writer,
      body: { description: 'again' },
      headers: { 'if-match': `"${key.id}.1"` },
    });
    expect(stale.status).toBe(409);
    const bad = await api('PUT', `/api/v1/ssh-keys/${key.id}`, { key: writer, body: { algorithm: 'rsa' }, headers: { 'if-match': `"${key.id}.2"` } });
    expect(bad.status).toBe(400);
    // the key material survives a metadata update
    const exp = await api('GET', `/api/v1/ssh-keys/${key.id}/export?private=true`, { key: a.adminKey });
    expect(run('ssh-keygen', ['-l', '-f', file('after-upd', exp.body.data.export.private_key)]).split(' ')[1]).toBe(key.fingerprint);
    track(exp.body.data.export.private_key);
    const del = await api('DELETE', `/api/v1/ssh-keys/${key.id}`, { key: writer });
    expect(del.status).toBe(200);
    expect((await api('GET', `/api/v1/ssh-keys/${key.id}`, { key: writer })).status).toBe(404);
  });
});

describe('GPG keys', () => {
  const gpgHome = () => {
    const home = mkdtempSync(join(dir, 'gnupg-'));
    return home;
  };
  const gpgShow = (home: string, armored: string) =>
    run('gpg', ['--homedir', home, '--batch', '--with-colons', '--import-options', 'show-only', '--import'], armored);

  it.each([
    ['curve25519', undefined, '22'],
    ['rsa', 3072, '1'],
  ] as const)('generates %s with user ids and expiry: gpg reads the exports, same fingerprint', async (algorithm, bits, gpgAlgo) => {
    const writer = await a.key(['gpg:read', 'gpg:write', 'export:read']);
    const res = await api('POST', '/api/v1/gpg-keys/generate', {
      key: writer,
      body: {
        name: unique('gpg'),
        algorithm,
        ...(bits ? { bits } : {}),
        user_ids: [{ name: 'Alice Example', email: 'alice@example.test' }],
        expires_in_days: 365,
      },
    });
    expect(res.status, res.text).toBe(201);
    const key = res.body.data.gpg_key;
    expect(key.fingerprint).toMatch(/^[0-9A-F]{40}$/);
    expect(key.user_ids).toEqual(['Alice Example <alice@example.test>']);
    expect(Date.parse(key.expires_at) - Date.parse(key.key_created_at)).toBe(365 * 86400_000);
    expect(res.text).not.toMatch(/PRIVATE KEY BLOCK/);

    const exp = await api('GET', `/api/v1/gpg-keys/${key.id}/export?private=true`, { key: writer });
    expect(exp.status).toBe(200);
    const { public_key, private_key } = exp.body.data.export;
    await trackGpg(private_key);
    const home = gpgHome();
    const pubOut = gpgShow(home, public_key);
    const fpr = pubOut
      .split('\n')
      .find((l) => l.startsWith('fpr:'))!
      .split(':')[9];
    expect(fpr).toBe(key.fingerprint);
    const pubLine = pubOut
      .split('\n')
      .find((l) => l.startsWith('pub:'))!
      .split(':');
    expect(pubLine[3]).toBe(gpgAlgo); // public key algorithm (22 = EdDSA, 1 = RSA)
    expect(Number(pubLine[6])).toBe(Math.floor(Date.parse(key.expires_at) / 1000)); // expiry
    expect(pubOut).toContain('Alice Example <alice@example.test>');
    // the secret key imports into gpg and is usable: sign and verify
    run('gpg', ['--homedir', home, '--batch', '--import'], private_key);
    const sig = run(
      'gpg',
      [
        '--homedir',
        home,
        '--batch',
        '--pinentry-mode',
        'loopback',
        '--passphrase',
        '',
        '--armor',
        '--detach-sign',
        '--output',
        '-',
        '--local-user',
        key.fingerprint,
      ],
      'hello',
    );
    const sigFile = file(`${key.id}.asc`, sig);
    const dataFile = file(`${key.id}.txt`, 'hello');
    const verify = execFileSync('gpg', ['--homedir', home, '--batch', '--status-fd', '1', '--verify', sigFile, dataFile], {
      encoding: 'utf8',
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    expect(verify).toContain(`VALIDSIG ${key.fingerprint}`);
  });

  it('imports a protected armored key from gpg with its passphrase; wrong passphrase and corrupt armor → 400', async () => {
    const writer = await a.key(['gpg:read', 'gpg:write']);
    const home = gpgHome();
    const passphrase = canary('gpgpass');
    run('gpg', [
      '--homedir',
      home,
      '--batch',
      '--pinentry-mode',
      'loopback',
      '--passphrase',
      passphrase,
      '--quick-gen-key',
      'Bob <bob@example.test>',
      'ed25519',
      'sign',
      '1y',
    ]);
    const fpr = run('gpg', ['--homedir', home, '--batch', '--with-colons', '--list-keys'])
      .split('\n')
      .find((l) => l.startsWith('fpr:'))!
      .split(':')[9]!;
    const armored = run('gpg', [
      '--homedir',
      home,
      '--batch',
      '--pinentry-mode',
      'loopback',
      '--passphrase',
      passphrase,
      '--armor',
      '--export-secret-keys',
      fpr,
    ]);
    await trackGpg((await openpgp.decryptKey({ privateKey: await openpgp.readPrivateKey({ armoredKey: armored }), passphrase })).armor());

    const wrong = await api('POST', '/api/v1/gpg-keys/import', {
      key: writer,
      body: { name: unique('g'), armored_key: armored, passphrase: 'nope' },
    });
    expect(wrong.status).toBe(400);
    expect(errorCode(wrong)).toBe('wrong_passphrase');
    const missing = await api('POST', '/api/v1/gpg-keys/import', { key: writer, body: { name: unique('g'), armored_key: armored } });
    expect(missing.status).toBe(400);
    expect(errorCode(missing)).toBe('passphrase_required');
    const corrupt = await api('POST', '/api/v1/gpg-keys/import', {
      key: writer,
      body: { name: unique('g'), armored_key: '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmDMEZ\n-----END PGP PUBLIC KEY BLOCK-----\n' },
    });
    expect(corrupt.status).toBe(400);
    expect(errorCode(corrupt)).toBe('invalid_key');

    const ok = await api('POST', '/api/v1/gpg-keys/import', { key: writer, body: { name: unique('g'), armored_key: armored, passphrase } });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.data.gpg_key).toMatchObject({
      fingerprint: fpr,
      user_ids: ['Bob <bob@example.test>'],
      has_private_key: true,
      source: 'imported',
      algorithm: 'ed25519',
    });
    const pubOnly = await api('POST', '/api/v1/gpg-keys/import', {
      key: writer,
      body: { name: unique('g'), armored_key: ok.body.data.gpg_key.public_key },
    });
    expect(pubOnly.status).toBe(201);
    expect(pubOnly.body.data.gpg_key).toMatchObject({ fingerprint: fpr, has_private_key: false });
  });

  it('handler scopes, cross-account 404, validation, update and delete', async () => {
    const gen = await api('POST', '/api/v1/gpg-keys/generate', {
      key: a.adminKey,
      body: { name: unique('g'), user_ids: [{ email: 'c@example.test' }] },
    });
    expect(gen.status, gen.text).toBe(201);
    const id = gen.body.data.gpg_key.id;
    const reader = await a.key(['gpg:read']);
    expect((await api('GET', `/api/v1/gpg-keys/${id}`, { key: reader })).status).toBe(200);
    expect((await api('GET', `/api/v1/gpg-keys/${id}/export`, { key: reader })).status).toBe(200);
    const noExport = await api('GET', `/api/v1/gpg-keys/${id}/export?private=true`, { key: reader });
    expect(noExport.status).toBe(403);
    const sshOnly = await a.key(['ssh:read']);
    expect((await api('GET', `/api/v1/gpg-keys/${id}`, { key: sshOnly })).status).toBe(403);
    for (const path of [`/api/v1/gpg-keys/${id}`, `/api/v1/gpg-keys/${id}/export?private=true`])
      expect((await api('GET', path, { key: b.adminKey })).status).toBe(404);
    expect((await api('DELETE', `/api/v1/gpg-keys/${id}`, { key: b.adminKey })).status).toBe(404);
    for (const body of [
      { name: unique('g'), user_ids: [] },
      { name: unique('g'), user_ids: [{ name: 'x' }], algorithm: 'dsa' },
      { name: unique('g'), user_ids: [{ email: 'not-an-email' }] },
      { name: unique('g'), user_ids: [{ name: 'x' }], bits: 2048, algorithm: 'rsa' },
      { name: unique('g'), user_ids: [{}] },
      { name: unique('g'), user_ids: [{ name: 'x' }], unknown: true },
    ]) {
      const res = await api('POST', '/api/v1/gpg-keys/generate', { key: a.adminKey, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const list = await api('GET', '/api/v1/gpg-keys', { key: reader });
    expect(list.body.data.gpg_keys.some((k: { id: string }) => k.id === id)).toBe(true);
    expect(list.text).not.toMatch(/PRIVATE KEY BLOCK/);
    const upd = await api('PUT', `/api/v1/gpg-keys/${id}`, { key: a.adminKey, body: { name: 'renamed' }, headers: { 'if-match': `"${id}.1"` } });
    expect(upd.status).toBe(200);
    expect(upd.body.data.gpg_key).toMatchObject({ name: 'renamed', version: 2 });
    expect((await api('DELETE', `/api/v1/gpg-keys/${id}`, { key: a.adminKey })).status).toBe(200);
    expect((await api('GET', `/api/v1/gpg-keys/${id}`, { key: a.adminKey })).status).toBe(404);
  });
});

describe('OpenSSL keys', () => {
  it.each([
    [{ algorithm: 'rsa', bits: 2048 }, 'rsa', 2048],
    [{ algorithm: 'ec', curve: 'P-384' }, 'ec', 384],
    [{ algorithm: 'ed25519' }, 'ed25519', 256],
  ] as const)('generates %o: openssl reads the PKCS#8 export, the fingerprint is SHA-256 of the SPKI DER', async (params, algorithm, bits) => {
    const writer = await a.key(['credentials:read', 'credentials:write', 'export:read']);
    const res = await api('POST', '/api/v1/openssl-keys/generate', { key: writer, body: { name: unique('ossl'), ...params } });
    expect(res.status, res.text).toBe(201);
    const key = res.body.data.openssl_key;
    expect(key).toMatchObject({ type: 'openssl_key', algorithm, bits, has_private_key: true });
    expect(res.text).not.toMatch(/PRIVATE KEY/);
    const exp = await api('GET', `/api/v1/openssl-keys/${key.id}/export`, { key: writer });
    expect(exp.status).toBe(200);
    const { private_key, public_key } = exp.body.data.export;
    track(private_key);
    expect(private_key).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    const keyFile = file(`${key.id}.pem`, private_key);
    expect(run('openssl', ['pkey', '-in', keyFile, '-noout', '-check'])).toMatch(/valid/i);
    const derivedPub = run('openssl', ['pkey', '-in', keyFile, '-pubout']);
    expect(derivedPub).toBe(public_key);
    const der = execFileSync('openssl', ['pkey', '-in', keyFile, '-pubout', '-outform', 'DER']);
    const sha = execFileSync('openssl', ['dgst', '-sha256', '-r'], { input: der, encoding: 'utf8' }).split(' ')[0];
    expect(key.fingerprint).toBe(sha);

    const jwk = await api('GET', `/api/v1/openssl-keys/${key.id}/export?format=jwk`, { key: writer });
    expect(jwk.status).toBe(200);
    expect(createPublicKey({ key: jwk.body.data.export.public_key, format: 'jwk' }).export({ type: 'spki', format: 'pem' })).toBe(public_key);
    track(jwk.body.data.export.private_key.d);
  });

  it('imports encrypted PEM made by openssl; wrong passphrase, missing passphrase and corrupt PEM → 400 with a clear message', async () => {
    const writer = await a.key(['credentials:read', 'credentials:write']);
    const passphrase = canary('osslpass');
    const plain = file('ec.pem', run('openssl', ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256']));
    const enc = run('openssl', ['pkcs8', '-topk8', '-in', plain, '-v2', 'aes-256-cbc', '-passout', `pass:${passphrase}`]);
    track(run('cat', [plain]));
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ private_key: enc, passphrase: 'wrong' }, 'wrong_passphrase', /wrong passphrase/],
      [{ private_key: enc }, 'passphrase_required', /encrypted/],
      [{ private_key: '-----BEGIN PRIVATE KEY-----\nMIIBnotvalid\n-----END PRIVATE KEY-----\n' }, 'invalid_key', /corrupt/],
      [{ private_key: 'hello' }, 'invalid_key', /not a PEM private key/],
      [{ public_key: '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n' }, 'invalid_key', /corrupt/],
    ];
    for (const [body, code, message] of cases) {
      const res = await api('POST', '/api/v1/openssl-keys/import', { key: writer, body: { name: unique('imp'), ...body } });
      expect(res.status, res.text).toBe(400);
      expect(errorCode(res)).toBe(code);
      expect(res.body.error).toMatch(message);
    }
    const ok = await api('POST', '/api/v1/openssl-keys/import', { key: writer, body: { name: unique('imp'), private_key: enc, passphrase } });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.data.openssl_key).toMatchObject({ algorithm: 'ec', curve: 'P-256', source: 'imported' });
    expect(ok.body.data.openssl_key.public_key).toBe(run('openssl', ['pkey', '-in', plain, '-pubout']));
    // the exported key is the same key as the one imported
    const exp = await api('GET', `/api/v1/openssl-keys/${ok.body.data.openssl_key.id}/export`, { key: a.adminKey });
    expect(createPrivateKey(exp.body.data.export.private_key).export({ format: 'jwk' }).d).toBe(
      createPrivateKey(run('cat', [plain])).export({ format: 'jwk' }).d,
    );
  });

  it('scopes, cross-account 404, validation, list without private parts, delete', async () => {
    const gen = await api('POST', '/api/v1/openssl-keys/generate', { key: a.adminKey, body: { name: unique('o'), algorithm: 'ec' } });
    const id = gen.body.data.openssl_key.id;
    const reader = await a.key(['credentials:read']);
    expect((await api('GET', `/api/v1/openssl-keys/${id}`, { key: reader })).status).toBe(200);
    expect((await api('GET', `/api/v1/openssl-keys/${id}/export`, { key: reader })).status).toBe(403);
    const list = await api('GET', '/api/v1/openssl-keys', { key: reader });
    expect(list.body.data.openssl_keys.some((k: { id: string }) => k.id === id)).toBe(true);
    expect(list.text).not.toMatch(/PRIVATE KEY/);
    for (const [m, p] of [
      ['GET', `/api/v1/openssl-keys/${id}`],
      ['GET', `/api/v1/openssl-keys/${id}/export`],
      ['DELETE', `/api/v1/openssl-keys/${id}`],
    ] as const) {
      expect((await api(m, p, { key: b.adminKey })).status).toBe(404);
    }
    for (const body of [
      { name: unique('o'), algorithm: 'dsa' },
      { name: unique('o'), algorithm: 'rsa', bits: 1024 },
      { name: unique('o'), algorithm: 'ec', bits: 2048 },
      { name: unique('o'), algorithm: 'rsa', curve: 'P-256' },
      { name: unique('o'), algorithm: 'ec', curve: 'secp256k1' },
    ])
      expect((await api('POST', '/api/v1/openssl-keys/generate', { key: a.adminKey, body })).status).toBe(400);
    expect((await api('GET', `/api/v1/openssl-keys/${id}/export?format=pkcs1`, { key: a.adminKey })).status).toBe(400);
    expect((await api('GET', '/api/v1/openssl-keys/not-a-uuid', { key: a.adminKey })).status).toBe(400);
    const deleter = await a.key(['credentials:read', 'credentials:delete']);
    expect((await api('DELETE', `/api/v1/openssl-keys/${id}`, { key: deleter })).status).toBe(200);
    expect((await api('GET', `/api/v1/openssl-keys/${id}`, { key: reader })).status).toBe(404);
  });
});

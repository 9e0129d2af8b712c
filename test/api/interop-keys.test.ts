import { spawnSync } from 'node:child_process';
import { createPrivateKey, type JsonWebKey } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as openpgp from 'openpgp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, errorCode, newAccount, unique, type ApiResponse, type TestAccount } from '../helpers/api.js';
import { opensslCert } from './credentials-helpers.js';

/**
 * Imported private keys are checked the way the reference tools check them: a key that
 * `openssl pkey -check` refuses is refused by every import path, and an OpenPGP key keeps
 * only what `gpg --import` keeps (user ids and subkeys with verifying self-signatures).
 * The tools are the oracle: each fixture is shown to them first.
 */
let a: TestAccount;
let writer: string;
let dir: string;

beforeAll(async () => {
  a = await newAccount('interop-keys');
  writer = await a.key(['credentials:read', 'credentials:write', 'ssh:write', 'gpg:write', 'gpg:read']);
  dir = mkdtempSync(join(tmpdir(), 'interop-keys-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text, { mode: 0o600 });
  return p;
};

/** `openssl pkey -check` on a PEM: true when OpenSSL finds the key consistent. */
const opensslAccepts = (name: string, pem: string) =>
  spawnSync('openssl', ['pkey', '-check', '-noout', '-in', file(name, pem)], { encoding: 'utf8' }).status === 0;

const jwkOf = (pem: string) => createPrivateKey(pem).export({ format: 'jwk' }) as JsonWebKey;
const pemOf = (jwk: JsonWebKey) => createPrivateKey({ key: jwk, format: 'jwk' }).export({ type: 'pkcs8', format: 'pem' }) as string;
const toB64 = (n: bigint, bytes: number) => Buffer.from(n.toString(16).padStart(bytes * 2, '0'), 'hex').toString('base64url');
const fromB64 = (s: string) => BigInt(`0x${Buffer.from(s, 'base64url').toString('hex')}`);

describe('private keys that openssl pkey -check refuses are refused on every import path', () => {
  const rsa = opensslCert('rsa.interop.test', 'rsa');
  const ec = opensslCert('ec.interop.test', 'ec');
  // RSA: d changed (the CRT values and the public key untouched, so signatures made with CRT still verify)
  const rsaJwk = jwkOf(rsa.key);
  const badRsa = pemOf({ ...rsaJwk, d: toB64(fromB64(rsaJwk.d!) + 2n, 256) });
  // EC: another private scalar under the same public point (the certificate still matches the public key)
  const ecJwk = jwkOf(ec.key);
  const otherEc = jwkOf(opensslCert('other.interop.test', 'ec').key);
  const badEc = pemOf({ ...ecJwk, d: otherEc.d });

  const paths: [string, (pem: string, cert: string) => Promise<ApiResponse>][] = [
    ['/openssl-keys/import', (pem) => api('POST', '/api/v1/openssl-keys/import', { key: writer, body: { name: unique('o'), private_key: pem } })],
    ['/ssh-keys/import', (pem) => api('POST', '/api/v1/ssh-keys/import', { key: writer, body: { name: unique('s'), private_key: pem } })],
    [
      '/code-signing-keys (software)',
      (pem, cert) =>
        api('POST', '/api/v1/code-signing-keys', { key: writer, body: { name: unique('c'), private_key: pem, certificate_chain: cert } }),
    ],
    [
      '/jks-keystores (private-key entry)',
      (pem, cert) =>
        api('POST', '/api/v1/jks-keystores', {
          key: writer,
          body: {
            name: unique('j'),
            store_password: 'changeit',
            entries: [{ kind: 'private-key', alias: 'k', private_key: pem, certificate_chain: cert }],
          },
        }),
    ],
  ];

  it('the fixtures: openssl accepts the originals and refuses the altered keys', () => {
    expect(opensslAccepts('rsa.pem', rsa.key)).toBe(true);
    expect(opensslAccepts('ec.pem', ec.key)).toBe(true);
    expect(opensslAccepts('bad-rsa.pem', badRsa)).toBe(false);
    expect(opensslAccepts('bad-ec.pem', badEc)).toBe(false);
  });

  it.each(paths)('%s: 400 invalid_key naming the inconsistency; the consistent key is imported', async (_path, send) => {
    for (const [bad, good, cert, why] of [
      [badRsa, rsa.key, rsa.cert, 'd·e is not congruent to 1 modulo λ(n)'],
      [badEc, ec.key, ec.cert, 'the public point does not match the private scalar'],
    ] as const) {
      const refused = await send(bad, cert);
      expect(refused.status, refused.text).toBe(400);
      expect(errorCode(refused)).toBe('invalid_key');
      expect(refused.body.error).toBe(
        `the private key is inconsistent: ${why} (openssl pkey -check refuses it too); export it again from its source`,
      );
      const accepted = await send(good, cert);
      expect(accepted.status, accepted.text).toBe(201);
    }
  });
});

describe('OpenPGP keys keep only what gpg --import keeps', () => {
  /** What GnuPG imports from an armored key: exit status, user ids and subkey ids (colon listing). */
  function gpgImport(armored: string) {
    const home = mkdtempSync(join(dir, 'gnupg-'));
    const imported = spawnSync('gpg', ['--homedir', home, '--batch', '--import'], { input: armored, encoding: 'utf8' });
    const listing = spawnSync('gpg', ['--homedir', home, '--batch', '--with-colons', '--list-keys'], { encoding: 'utf8' }).stdout;
    const lines = listing.split('\n').map((l) => l.split(':'));
    return {
      stderr: imported.stderr,
      userIds: lines.filter((l) => l[0] === 'uid').map((l) => l[9]),
      subkeys: lines.filter((l) => l[0] === 'sub').map((l) => l[4]),
    };
  }

  /** A key whose user id `index` was renamed after it was certified: its self-signature no longer verifies. */
  async function withForgedUserId(userIDs: { name: string; email: string }[], index: number) {
    const { publicKey } = await openpgp.generateKey({ type: 'ecc', curve: 'curve25519Legacy', userIDs, format: 'object' });
    const key = await openpgp.readKey({ armoredKey: publicKey.armor() });
    Object.assign(key.users[index]!.userID!, { userID: 'Mallory <mallory@example.test>', name: 'Mallory', email: 'mallory@example.test' });
    return key.armor();
  }

  it('a key whose only user id does not verify: gpg skips it, the API refuses it', async () => {
    const armored = await withForgedUserId([{ name: 'Alice', email: 'alice@example.test' }], 0);
    const gpg = gpgImport(armored);
    expect(gpg.stderr).toMatch(/no user ID|no valid user IDs/);
    expect(gpg.userIds).toEqual([]);
    const res = await api('POST', '/api/v1/gpg-keys/import', { key: writer, body: { name: unique('g'), armored_key: armored } });
    expect(res.status, res.text).toBe(400);
    expect(errorCode(res)).toBe('invalid_key');
    expect(res.body.error).toMatch(/no user id of this key carries a valid self-signature/);
  });

  it('a key with one forged user id among valid ones: the API reports and exports the user ids gpg keeps, and the same subkeys', async () => {
    const armored = await withForgedUserId(
      [
        { name: 'Alice', email: 'alice@example.test' },
        { name: 'Alice Work', email: 'alice@work.example.test' },
      ],
      1,
    );
    const gpg = gpgImport(armored);
    expect(gpg.userIds).toEqual(['Alice <alice@example.test>']);
    const res = await api('POST', '/api/v1/gpg-keys/import', { key: writer, body: { name: unique('g'), armored_key: armored } });
    expect(res.status, res.text).toBe(201);
    const key = res.body.data.gpg_key;
    expect(key.user_ids).toEqual(gpg.userIds);
    expect(key.subkeys.map((s: { key_id: string }) => s.key_id)).toEqual(gpg.subkeys);
    // the stored public key no longer carries the forged user id: gpg reads the same from the export
    const exp = await api('GET', `/api/v1/gpg-keys/${key.id}/export`, { key: writer });
    expect(exp.status, exp.text).toBe(200);
    expect(exp.body.data.export.public_key).not.toBe(armored);
    expect(gpgImport(exp.body.data.export.public_key).userIds).toEqual(['Alice <alice@example.test>']);
  });
});

describe('Java keystores', () => {
  it('store_type "jks" is refused with a sentence saying PKCS#12 is produced and how to convert; "pkcs12" (the default) works with keytool', async () => {
    const jks = await api('POST', '/api/v1/jks-keystores', {
      key: writer,
      body: { name: unique('jks'), store_type: 'jks', store_password: 'changeit' },
    });
    expect(jks.status, jks.text).toBe(400);
    expect(errorCode(jks)).toBe('validation_failed');
    expect(jks.body.details).toEqual([
      {
        path: 'body.store_type',
        message:
          'JKS is not produced: keystores are PKCS#12, the default keystore type of Java 9 and later, which keytool and every JVM read; for a legacy tool that needs JKS, convert the export with keytool -importkeystore -srcstoretype PKCS12 -deststoretype JKS',
      },
    ]);
    const other = await api('POST', '/api/v1/jks-keystores', {
      key: writer,
      body: { name: unique('jks'), store_type: 'jceks', store_password: 'changeit' },
    });
    expect(other.body.details).toEqual([{ path: 'body.store_type', message: 'store_type must be "pkcs12"' }]);
    const made = await api('POST', '/api/v1/jks-keystores', {
      key: writer,
      body: { name: unique('jks'), store_type: 'pkcs12', store_password: 'changeit' },
    });
    expect(made.status, made.text).toBe(201);
  });
});

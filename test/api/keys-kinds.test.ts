import { execFileSync, spawnSync } from 'node:child_process';
import { createHash, createPrivateKey, createPublicKey, createSign, createVerify } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ed25519, x25519 } from '@noble/curves/ed25519.js';
import { blake2b } from '@noble/hashes/blake2.js';
import { base32 } from '@scure/base';
import { Decrypter, Encrypter, identityToRecipient } from 'age-encryption';
import { createLocalJWKSet, importJWK, jwtVerify, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { api, canary, errorCode, newAccount, unique, type TestAccount } from '../helpers/api.js';
import { useRuntimeConfig } from '../helpers/in-process.js';
import { findLeaks } from '../helpers/leaks.js';
import { materialProbes } from './keys-helpers.js';

/**
 * The seven /api/v1/keys/{kind} kinds, the tenant JWKS and generate-material, each
 * artifact checked by a tool or library other than the one that made it.
 */
let a: TestAccount;
let b: TestAccount;
let dir: string;
let writer: string;
let exporter: string;
const exported: string[] = [];

const run = (cmd: string, args: string[], input?: string | Buffer) =>
  execFileSync(cmd, args, { input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
const file = (name: string, content: string | Buffer) => {
  const p = join(dir, name);
  writeFileSync(p, content, { mode: 0o600 });
  return p;
};
const track = (material: string) => exported.push(...materialProbes(material));

async function generate(kind: string, body: Record<string, unknown>) {
  const res = await api('POST', `/api/v1/keys/${kind}/generate`, { key: writer, body: { name: unique(kind), ...body } });
  expect(res.status, res.text).toBe(201);
  expect(res.text).not.toMatch(/PRIVATE KEY|AGE-SECRET-KEY|"private"/);
  return res.body.data.key;
}
async function withPrivate(kind: string, id: string) {
  const res = await api('GET', `/api/v1/keys/${kind}/${id}?include_private=true`, { key: exporter });
  expect(res.status, res.text).toBe(200);
  return res.body.data.key;
}

beforeAll(async () => {
  useRuntimeConfig();
  [a, b] = await Promise.all([newAccount('kinds-a'), newAccount('kinds-b')]);
  [writer, exporter] = await Promise.all([a.key(['credentials:write']), a.key(['credentials:write', 'export:read'])]);
  dir = mkdtempSync(join(tmpdir(), 'kinds-test-'));
});

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  const leaks = await findLeaks({ dynamoEndpoint: inject('dynamoEndpoint'), tableName: inject('tableName'), logText: '', extra: exported });
  expect(leaks).toEqual([]);
});

describe('age', () => {
  it('the identity decrypts what was encrypted to the recipient (age-encryption)', async () => {
    const key = await generate('age', {});
    expect(key).toMatchObject({ kind: 'age', type: 'age_key', algorithm: 'x25519' });
    expect(key.recipient).toMatch(/^age1[02-9ac-hj-np-z]{58}$/);
    const full = await withPrivate('age', key.id);
    const identity = full.private.identity as string;
    track(identity);
    expect(identity).toMatch(/^AGE-SECRET-KEY-1[02-9AC-HJ-NP-Z]{58}$/);
    expect(await identityToRecipient(identity)).toBe(key.recipient);
    const secret = canary('age');
    const e = new Encrypter();
    e.addRecipient(key.recipient);
    const ciphertext = await e.encrypt(secret);
    const d = new Decrypter();
    d.addIdentity(identity);
    expect(await d.decrypt(ciphertext, 'text')).toBe(secret);
  });
});

describe('dkim', () => {
  it('the TXT record parses (RFC 6376 tag list) and holds the public half of the signing key', async () => {
    const key = await generate('dkim', { selector: 'mail2026', domain: 'example.test' });
    const rec = key.dns_record;
    expect(rec).toMatchObject({ name: 'mail2026._domainkey.example.test', type: 'TXT' });
    expect(rec.strings.join('')).toBe(rec.value);
    for (const s of rec.strings) expect(s.length).toBeLessThanOrEqual(255);
    const tags = Object.fromEntries(
      (rec.value as string)
        .split(';')
        .map((t) => t.trim())
        .filter(Boolean)
        .map((t) => [t.slice(0, t.indexOf('=')).trim(), t.slice(t.indexOf('=') + 1).replace(/\s+/g, '')]),
    );
    expect(tags.v).toBe('DKIM1');
    expect(tags.k).toBe('rsa');
    const pub = createPublicKey({ key: Buffer.from(tags.p!, 'base64'), format: 'der', type: 'spki' });
    expect(pub.asymmetricKeyDetails?.modulusLength).toBe(2048);
    const full = await withPrivate('dkim', key.id);
    track(full.private.private_key);
    expect(run('openssl', ['rsa', '-in', file('dkim.pem', full.private.private_key_pkcs1), '-check', '-noout'])).toMatch(/RSA key ok/);
    // a signature by the private key verifies with the key published in DNS
    const sig = createSign('sha256').update('From: a@example.test').sign(full.private.private_key);
    expect(createVerify('sha256').update('From: a@example.test').verify(pub, sig)).toBe(true);
  });

  it('400 on bad selector, domain or bits', async () => {
    for (const body of [
      { selector: 'bad selector', domain: 'example.test' },
      { selector: 's', domain: 'not a domain' },
      { selector: 's', domain: 'example.test', bits: 1024 },
      { domain: 'example.test' },
    ]) {
      const res = await api('POST', '/api/v1/keys/dkim/generate', { key: writer, body: { name: unique('d'), ...body } });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
  });
});

describe('jwt-signing and the tenant JWKS', () => {
  it.each(['ES256', 'RS256', 'EdDSA'] as const)('a JWT signed with a %s key verifies against GET /.well-known/jwks.json', async (alg) => {
    const key = await generate('jwt-signing', { algorithm: alg });
    expect(key.public_jwk).toMatchObject({ kid: key.kid, alg, use: 'sig' });
    expect(key.public_jwk.d).toBeUndefined();
    const full = await withPrivate('jwt-signing', key.id);
    const jwk = full.private.private_jwk as JWK;
    track(jwk.d!);
    const token = await new SignJWT({ sub: 'svc' })
      .setProtectedHeader({ alg, kid: key.kid })
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(await importJWK(jwk, alg));
    // any credential of the account may read the key set; it carries no private parameter
    const anyKey = await a.key(['secrets:read']);
    const res = await api('GET', '/api/v1/.well-known/jwks.json', { key: anyKey });
    expect(res.status).toBe(200);
    const set = res.body as { keys: JWK[] };
    for (const k of set.keys) for (const p of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(k).not.toHaveProperty(p);
    const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(set));
    expect(payload.sub).toBe('svc');
    expect(protectedHeader.kid).toBe(key.kid);
    // another account's key set does not hold this key
    const other = await api('GET', '/api/v1/.well-known/jwks.json', { key: b.adminKey });
    expect(other.body.keys.map((k: JWK) => k.kid)).not.toContain(key.kid);
    await expect(jwtVerify(token, createLocalJWKSet(other.body))).rejects.toThrow();
  });

  it("holds the service's token-signing keys too: an access token of the account verifies against it", async () => {
    const jwt = await import('../../lib/auth/jwt.js');
    const token = await jwt.issueAccessToken(a.tenantId, 'dana@example.test', ['secrets:read']);
    const res = await api('GET', '/api/v1/.well-known/jwks.json', { key: token });
    expect(res.status).toBe(200);
    const { payload } = await jwtVerify(token, createLocalJWKSet(res.body), { issuer: jwt.TOKEN_ISSUER, audience: jwt.TOKEN_AUDIENCE });
    expect(payload.sub).toBe('dana@example.test');
    expect(res.text).not.toMatch(/"d":/);
  });

  it('400 on an unknown algorithm', async () => {
    const res = await api('POST', '/api/v1/keys/jwt-signing/generate', { key: writer, body: { name: unique('j'), algorithm: 'HS256' } });
    expect(res.status).toBe(400);
  });
});

describe('minisign', () => {
  it('the key files follow the minisign format and a signature made with the secret key verifies with the public key', async () => {
    const key = await generate('minisign', { comment: 'release signing' });
    expect(key.key_id).toMatch(/^[0-9A-F]{16}$/);
    expect(key.public_key_file).toBe(`untrusted comment: minisign public key ${key.key_id}\n${key.public_key}\n`);
    const full = await withPrivate('minisign', key.id);
    const skFile = full.private.secret_key_file as string;
    track(skFile.split('\n')[1]!);
    expect(skFile.split('\n')[0]).toBe('untrusted comment: release signing');
    const message = Buffer.from(`release ${canary('minisign')}`);

    if (spawnSync('minisign', ['-v']).status === 0) {
      // the reference tool: sign with our secret key file, verify with our public key file
      const sk = file('minisign.key', skFile);
      const pk = file('minisign.pub', key.public_key_file);
      const msg = file('release.txt', message);
      run('minisign', ['-S', '-s', sk, '-m', msg, '-t', 'trusted']);
      expect(run('minisign', ['-V', '-p', pk, '-m', msg])).toMatch(/Signature and comment signature verified/);
      return;
    }
    // without the minisign tool: parse both files per the documented format and sign/verify
    // with @noble (independent of the service's node:crypto code)
    const sk = Buffer.from(skFile.split('\n')[1]!, 'base64');
    expect(sk.length).toBe(158);
    expect(sk.subarray(0, 2).toString()).toBe('Ed');
    expect([...sk.subarray(2, 4)]).toEqual([0, 0]); // no KDF
    expect(sk.subarray(4, 6).toString()).toBe('B2');
    const keynum = sk.subarray(54, 62);
    const secret = sk.subarray(62, 126);
    const checksum = sk.subarray(126, 158);
    expect(Buffer.from(blake2b(Buffer.concat([sk.subarray(0, 2), keynum, secret]), { dkLen: 32 }))).toEqual(checksum);
    const pk = Buffer.from(key.public_key, 'base64');
    expect(pk.length).toBe(42);
    expect(pk.subarray(0, 2).toString()).toBe('Ed');
    expect(pk.subarray(2, 10)).toEqual(keynum);
    expect(Buffer.from(keynum).reverse().toString('hex').toUpperCase()).toBe(key.key_id);
    expect(Buffer.from(ed25519.getPublicKey(secret.subarray(0, 32)))).toEqual(pk.subarray(10));
    // a prehashed (ED) minisign signature + trusted comment signature
    const sig = ed25519.sign(blake2b(message, { dkLen: 64 }), secret.subarray(0, 32));
    const trusted = 'timestamp:1\tfile:release.txt\thashed';
    const globalSig = ed25519.sign(Buffer.concat([sig, Buffer.from(trusted)]), secret.subarray(0, 32));
    expect(ed25519.verify(sig, blake2b(message, { dkLen: 64 }), pk.subarray(10))).toBe(true);
    expect(ed25519.verify(globalSig, Buffer.concat([sig, Buffer.from(trusted)]), pk.subarray(10))).toBe(true);
    expect(ed25519.verify(sig, blake2b(Buffer.from('tampered'), { dkLen: 64 }), pk.subarray(10))).toBe(false);
  });
});

describe('piv', () => {
  it.each([
    ['9a', 'ec-p256', 'Digital Signature', 'TLS Web Client Authentication'],
    ['9c', 'ec-p384', 'Digital Signature, Non Repudiation', undefined],
    ['9d', 'rsa-2048', 'Key Encipherment', undefined],
    ['9e', 'ec-p256', 'Digital Signature', undefined],
  ] as const)('slot %s (%s): a self-signed certificate for the key, with the slot usages', async (slot, algorithm, usage, eku) => {
    const key = await generate('piv', { slot, algorithm, subject: `PIV ${slot}` });
    expect(key).toMatchObject({ slot, subject: `CN=PIV ${slot}` });
    const cert = file(`piv-${slot}.pem`, key.certificate_pem);
    const text = run('openssl', ['x509', '-in', cert, '-noout', '-text']);
    expect(text).toContain(`Subject: CN = PIV ${slot}`);
    expect(text).toMatch(new RegExp(`Key Usage: critical\\s+${usage}\\n`));
    if (eku) expect(text).toContain(eku);
    expect(run('openssl', ['verify', '-partial_chain', '-trusted', cert, cert])).toMatch(/OK/);
    const full = await withPrivate('piv', key.id);
    track(full.private.private_key);
    // the slot key is the certified key
    expect(run('openssl', ['pkey', '-in', file(`piv-${slot}.key`, full.private.private_key), '-pubout'])).toBe(
      run('openssl', ['x509', '-in', cert, '-noout', '-pubkey']),
    );
    expect(Date.parse(key.expires_at)).toBe(Date.parse(key.not_after));
  });

  it('400 on an unknown slot or algorithm', async () => {
    for (const body of [{ slot: '9b' }, { slot: '9a', algorithm: 'ed25519' }, { slot: '9a', validity_days: 0 }]) {
      expect((await api('POST', '/api/v1/keys/piv/generate', { key: writer, body: { name: unique('p'), ...body } })).status).toBe(400);
    }
  });
});

describe('smime', () => {
  it('PKCS#12 export (password by header) opens with openssl and keytool; the key signs mail that verifies against the account CA', async () => {
    const key = await generate('smime', { email: 'alice@example.test', common_name: 'Alice' });
    expect(key).toMatchObject({ email: 'alice@example.test', subject: expect.stringContaining('CN=Alice') });
    const password = `P-${canary('p12').slice(0, 40)}`;
    const res = await api('GET', `/api/v1/keys/smime/${key.id}/pkcs12`, { key: exporter, headers: { 'x-pkcs12-password': password } });
    expect(res.status, res.text).toBe(200);
    const p12 = res.body.data.pkcs12;
    expect(p12.password).toBeUndefined();
    const p12File = file('alice.p12', Buffer.from(p12.content, 'base64'));
    const pemOut = run('openssl', ['pkcs12', '-in', p12File, '-passin', `pass:${password}`, '-nodes']);
    expect(pemOut.match(/BEGIN CERTIFICATE/g)).toHaveLength(3);
    expect(pemOut).toContain('BEGIN PRIVATE KEY');
    track(pemOut.slice(pemOut.indexOf('-----BEGIN PRIVATE KEY')));
    expect(() => run('openssl', ['pkcs12', '-in', p12File, '-passin', 'pass:wrong-password', '-nodes'])).toThrow();
    const ks = run('keytool', ['-list', '-v', '-storetype', 'PKCS12', '-keystore', p12File, '-storepass', password]);
    expect(ks).toContain('Entry type: PrivateKeyEntry');
    expect(ks).toContain('Certificate chain length: 3');
    expect(ks).toContain('Alias name: alice@example.test');

    // S/MIME: sign with the exported key + certificate, verify against the account root
    const certs = pemOut.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n/g)!;
    const keyFile = file('alice.key', pemOut.slice(pemOut.indexOf('-----BEGIN PRIVATE KEY')));
    const leafFile = file('alice.crt', certs.find((c) => run('openssl', ['x509', '-noout', '-subject'], c).includes('Alice'))!);
    const ca = await api('GET', '/api/v1/certificates', { key: a.adminKey });
    const rootFile = file('root.pem', ca.body.data.certificate_authority.root.certificate_pem);
    const interFile = file('inter.pem', ca.body.data.certificate_authority.intermediate.certificate_pem);
    const msg = file('mail.txt', 'Subject: hello\n\nhi');
    const signed = run('openssl', ['smime', '-sign', '-in', msg, '-signer', leafFile, '-inkey', keyFile, '-certfile', interFile]);
    const verified = spawnSync('openssl', ['smime', '-verify', '-CAfile', rootFile, '-purpose', 'smimesign'], { input: signed, encoding: 'utf8' });
    expect(verified.stderr).toContain('Verification successful');
    const ext = run('openssl', ['x509', '-in', leafFile, '-noout', '-ext', 'subjectAltName,extendedKeyUsage']);
    expect(ext).toContain('email:alice@example.test');
    expect(ext).toContain('E-mail Protection');
  });

  it('generates a password when none is sent; 400 on a bad password header; needs export:read', async () => {
    const key = await generate('smime', { email: 'bob@example.test', algorithm: 'ec-p256' });
    const res = await api('GET', `/api/v1/keys/smime/${key.id}/pkcs12`, { key: exporter });
    expect(res.status).toBe(200);
    const { password, content } = res.body.data.pkcs12;
    expect(password).toMatch(/^[A-Za-z0-9]{24}$/);
    expect(run('openssl', ['pkcs12', '-in', file('bob.p12', Buffer.from(content, 'base64')), '-passin', `pass:${password}`, '-nokeys'])).toContain(
      'BEGIN CERTIFICATE',
    );
    const short = await api('GET', `/api/v1/keys/smime/${key.id}/pkcs12`, { key: exporter, headers: { 'x-pkcs12-password': 'short' } });
    expect(short.status).toBe(400);
    const noExport = await api('GET', `/api/v1/keys/smime/${key.id}/pkcs12`, { key: writer });
    expect(noExport.status).toBe(403);
    const cross = await api('GET', `/api/v1/keys/smime/${key.id}/pkcs12`, { key: b.adminKey });
    expect(cross.status).toBe(404);
    const bad = await api('POST', '/api/v1/keys/smime/generate', { key: writer, body: { name: unique('s'), email: 'not-an-email' } });
    expect(bad.status).toBe(400);
  });
});

describe('smime metadata', () => {
  it('GET /keys/smime/{id} shows the certificate and never the private key; 401, 403 without credentials:write, 404 across accounts, 400 on a malformed id', async () => {
    const key = await generate('smime', { email: 'carol@example.test', common_name: 'Carol' });
    const res = await api('GET', `/api/v1/keys/smime/${key.id}`, { key: writer });
    expect(res.status, res.text).toBe(200);
    const shown = res.body.data.key ?? res.body.data;
    expect(shown).toMatchObject({ id: key.id, email: 'carol@example.test', subject: expect.stringContaining('CN=Carol') });
    expect(res.text).not.toContain('PRIVATE KEY');
    expect((await api('GET', `/api/v1/keys/smime/${key.id}`, { key: b.adminKey })).status).toBe(404);
    expect((await api('GET', `/api/v1/keys/smime/${key.id}`)).status).toBe(401);
    const reader = await a.key(['credentials:read']);
    const denied = await api('GET', `/api/v1/keys/smime/${key.id}`, { key: reader });
    expect(denied.status).toBe(403);
    expect(errorCode(denied)).toBe('insufficient_scope');
    const malformed = await api('GET', '/api/v1/keys/smime/not-a-uuid', { key: writer });
    expect(malformed.status).toBe(400);
    expect(errorCode(malformed)).toBe('validation_failed');
  });
});

describe('wireguard', () => {
  it('the base64 private key derives the base64 public key (X25519, @noble/curves); the peer snippet names it', async () => {
    const key = await generate('wireguard', { address: ['10.8.0.2/32'], endpoint: 'vpn.example.test:51820', persistent_keepalive: 25 });
    const pub = Buffer.from(key.public_key, 'base64');
    expect(pub.length).toBe(32);
    expect(key.peer_config).toBe(
      `[Peer]\nPublicKey = ${key.public_key}\nAllowedIPs = 10.8.0.2/32\nEndpoint = vpn.example.test:51820\nPersistentKeepalive = 25\n`,
    );
    const full = await withPrivate('wireguard', key.id);
    track(full.private.private_key);
    const priv = Buffer.from(full.private.private_key, 'base64');
    expect(priv.length).toBe(32);
    expect(priv[0]! & 7).toBe(0); // clamped as `wg genkey` writes it
    expect(Buffer.from(x25519.getPublicKey(priv)).toString('base64')).toBe(key.public_key);
    expect(full.private.interface_config).toBe(`[Interface]\nPrivateKey = ${full.private.private_key}\nAddress = 10.8.0.2/32\n`);
    expect(key.peer_config).not.toContain(full.private.private_key);
  });
});

describe('GET /api/v1/keys/{kind}/{id}', () => {
  it('public parts without include_private; include_private needs export:read; another account or another kind → 404; 400 on bad input', async () => {
    const key = await generate('wireguard', {});
    const plain = await api('GET', `/api/v1/keys/wireguard/${key.id}`, { key: writer });
    expect(plain.status).toBe(200);
    expect(plain.body.data.key.private).toBeUndefined();
    expect(plain.headers.get('etag')).toBe(`"${key.id}.1"`);
    const denied = await api('GET', `/api/v1/keys/wireguard/${key.id}?include_private=true`, { key: writer });
    expect(denied.status).toBe(403);
    expect(errorCode(denied)).toBe('insufficient_scope');
    expect((await api('GET', `/api/v1/keys/wireguard/${key.id}`, { key: b.adminKey })).status).toBe(404);
    expect((await api('GET', `/api/v1/keys/age/${key.id}`, { key: writer })).status).toBe(404);
    expect((await api('GET', `/api/v1/keys/wireguard/${key.id}?include_private=1`, { key: writer })).status).toBe(400);
    expect((await api('GET', '/api/v1/keys/wireguard/nope', { key: writer })).status).toBe(400);
    for (const kind of ['age', 'dkim', 'jwt-signing', 'minisign', 'piv', 'smime', 'wireguard']) {
      const res = await api('POST', `/api/v1/keys/${kind}/generate`, { key: writer, body: { name: unique('x'), surprise: true } });
      expect(res.status, kind).toBe(400);
      expect(errorCode(res)).toBe('validation_failed');
    }
  });
});

describe('POST /api/v1/generate-material', () => {
  const gen = (body: Record<string, unknown>, key = writer) => api('POST', '/api/v1/generate-material', { key, body });

  it('random bytes in hex, base64, base64url and base32, UUIDs, passwords; nothing stored', async () => {
    const hex = await gen({ type: 'bytes', length: 16, count: 3 });
    expect(hex.status).toBe(200);
    expect(hex.body.data).toMatchObject({ type: 'bytes', count: 3, stored: null });
    for (const m of hex.body.data.material) expect(m.value).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(hex.body.data.material.map((m: { value: string }) => m.value)).size).toBe(3);
    expect(Buffer.from((await gen({ type: 'bytes', length: 48, encoding: 'base64' })).body.data.material[0].value, 'base64')).toHaveLength(48);
    expect((await gen({ type: 'bytes', length: 10, encoding: 'base64url' })).body.data.material[0].value).toMatch(/^[A-Za-z0-9_-]{14}$/);
    expect(base32.decode((await gen({ type: 'bytes', length: 20, encoding: 'base32' })).body.data.material[0].value)).toHaveLength(20);
    const v7 = await gen({ type: 'uuid', version: 'v7', count: 2 });
    for (const m of v7.body.data.material) expect(m.value).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const pw = await gen({ type: 'password', length: 40, symbols: false, count: 5 });
    for (const m of pw.body.data.material) {
      expect(m.value).toMatch(/^[A-Za-z0-9]{40}$/);
      expect(m.value).toMatch(/[a-z]/);
      expect(m.value).toMatch(/[A-Z]/);
      expect(m.value).toMatch(/[0-9]/);
    }
    const unamb = await gen({ type: 'password', length: 200, exclude_ambiguous: true });
    expect(unamb.body.data.material[0].value).not.toMatch(/[Il1O0o|]/);
  });

  it('key pairs in PEM, JWK and OpenSSH, checked by openssl and ssh-keygen', async () => {
    const pem = await gen({ type: 'key_pair', algorithm: 'ec-p384' });
    expect(pem.status).toBe(200);
    const p = pem.body.data.material[0];
    expect(run('openssl', ['pkey', '-in', file('gm.pem', p.private_key), '-pubout'])).toBe(p.public_key);
    const der = createPublicKey(p.public_key).export({ type: 'spki', format: 'der' });
    expect(p.fingerprint).toBe(createHash('sha256').update(der).digest('hex'));
    const jwk = await gen({ type: 'key_pair', algorithm: 'x25519', format: 'jwk' });
    expect(jwk.body.data.material[0].private_key).toMatchObject({ kty: 'OKP', crv: 'X25519' });
    expect(createPrivateKey({ key: jwk.body.data.material[0].private_key, format: 'jwk' }).asymmetricKeyType).toBe('x25519');
    const ssh = await gen({ type: 'key_pair', algorithm: 'ed25519', format: 'openssh' });
    const s = ssh.body.data.material[0];
    expect(run('ssh-keygen', ['-l', '-f', file('gm_ed25519', s.private_key)]).split(' ')[1]).toBe(s.ssh_fingerprint);
  });

  it('stores when asked: a key pair as an OpenSSL key, a password as a secret (which needs secrets:write)', async () => {
    const stored = await gen({ type: 'key_pair', algorithm: 'rsa-2048', store: { name: unique('gm-key') } });
    expect(stored.status, stored.text).toBe(201);
    const k = stored.body.data.stored;
    expect(k).toMatchObject({ type: 'openssl_key', algorithm: 'rsa', bits: 2048, public_key: stored.body.data.material[0].public_key });
    const ex = await api('GET', `/api/v1/openssl-keys/${k.id}/export`, { key: a.adminKey });
    expect(ex.body.data.export.private_key).toBe(stored.body.data.material[0].private_key);
    track(ex.body.data.export.private_key);

    const name = unique('gm-pw');
    expect((await gen({ type: 'password', store: { name } })).status).toBe(403);
    const both = await a.key(['credentials:write', 'secrets:write']);
    const pw = await gen({ type: 'password', store: { name } }, both);
    expect(pw.status, pw.text).toBe(201);
    const secret = await api('GET', `/api/v1/secrets/${name}`, { key: a.adminKey });
    expect(secret.body.data.secret.data.value).toBe(pw.body.data.material[0].value);
    await api('DELETE', `/api/v1/secrets/${name}`, { key: a.adminKey });
  });

  it('400 on bad requests', async () => {
    for (const body of [
      { type: 'dice' },
      { type: 'bytes', length: 0 },
      { type: 'bytes', length: 10, encoding: 'base58' },
      { type: 'bytes', count: 101 },
      { type: 'password', length: 7 },
      { type: 'password', lowercase: false, uppercase: false, digits: false, symbols: false },
      { type: 'key_pair', algorithm: 'dsa' },
      { type: 'key_pair', algorithm: 'x25519', format: 'openssh' },
      { type: 'key_pair', count: 2, store: { name: 'x' } },
      { type: 'uuid', version: 'v1' },
      { type: 'uuid', extra: true },
      {},
    ]) {
      const res = await gen(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
  });
});

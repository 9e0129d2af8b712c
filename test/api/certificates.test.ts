import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { api, canary, errorCode, newAccount, unique, type TestAccount } from '../helpers/api.js';
import { useRuntimeConfig } from '../helpers/in-process.js';
import { findLeaks } from '../helpers/leaks.js';
import { materialProbes } from './keys-helpers.js';

/**
 * The account CA through real HTTP, checked with openssl and keytool: issuance from a CSR
 * or for a generated key, chain verification against the account root, downloads (PEM,
 * DER, chain, key, PKCS#12), renewal, revocation reflected in the CRL, expiry events.
 */
let a: TestAccount;
let b: TestAccount;
let dir: string;
let writer: string;
let reader: string;
let exporter: string;
let root: string;
let inter: string;
const exported: string[] = [];

const run = (cmd: string, args: string[], input?: string | Buffer) =>
  execFileSync(cmd, args, { input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
const file = (name: string, content: string | Buffer) => {
  const p = join(dir, `${unique('f')}-${name}`);
  writeFileSync(p, content, { mode: 0o600 });
  return p;
};
const verify = (leaf: string, extra: string[] = []) =>
  spawnSync('openssl', ['verify', ...extra, '-CAfile', root, '-untrusted', inter, leaf], { encoding: 'utf8' });
const track = (material: string) => exported.push(...materialProbes(material));

async function enroll(body: Record<string, unknown>, key = writer) {
  const res = await api('POST', '/api/v1/certificates/enroll', { key, body: { name: unique('cert'), ...body } });
  expect(res.status, res.text).toBe(201);
  return res.body.data.certificate;
}
async function dl(id: string, format: string, key = reader) {
  const res = await api('GET', `/api/v1/certificates/${id}/download?format=${format}`, { key });
  expect(res.status, res.text).toBe(200);
  return res.body.data.download;
}

beforeAll(async () => {
  useRuntimeConfig();
  [a, b] = await Promise.all([newAccount('certs-a'), newAccount('certs-b')]);
  [writer, reader, exporter] = await Promise.all([a.key(['certs:write']), a.key(['certs:read']), a.key(['certs:read', 'export:read'])]);
  dir = mkdtempSync(join(tmpdir(), 'certs-test-'));
  // the first enrollment creates the account CA
  await enroll({ subject: { common_name: 'bootstrap.example.test' } });
  const list = await api('GET', '/api/v1/certificates', { key: reader });
  const ca = list.body.data.certificate_authority;
  root = file('root.pem', ca.root.certificate_pem);
  inter = file('inter.pem', ca.intermediate.certificate_pem);
});

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  const leaks = await findLeaks({ dynamoEndpoint: inject('dynamoEndpoint'), tableName: inject('tableName'), logText: '', extra: exported });
  expect(leaks).toEqual([]);
});

describe('the account CA', () => {
  it('root (self-signed CA, path length 1) and intermediate (CA, path length 0) verify with openssl; GET by its id; downloads', async () => {
    const list = await api('GET', '/api/v1/certificates', { key: reader });
    const ca = list.body.data.certificate_authority;
    expect(ca.type).toBe('certificate_authority');
    expect(ca.root.subject).toContain(`OU=${a.tenantId}`);
    expect(run('openssl', ['x509', '-in', root, '-noout', '-ext', 'basicConstraints'])).toMatch(/CA:TRUE, pathlen:1/);
    expect(run('openssl', ['x509', '-in', inter, '-noout', '-ext', 'basicConstraints'])).toMatch(/CA:TRUE, pathlen:0/);
    expect(spawnSync('openssl', ['verify', '-CAfile', root, inter], { encoding: 'utf8' }).stdout).toContain(': OK');
    expect(list.text).not.toMatch(/PRIVATE KEY|root_key|intermediate_key/);
    const get = await api('GET', `/api/v1/certificates/${ca.id}`, { key: reader });
    expect(get.status).toBe(200);
    expect(get.body.data.certificate_authority.root.fingerprint).toBe(ca.root.fingerprint);
    expect((await dl(ca.id, 'pem')).content).toBe(ca.root.certificate_pem);
    expect((await dl(ca.id, 'chain')).content).toBe(ca.intermediate.certificate_pem + ca.root.certificate_pem);
    // the CA's private keys are never exported
    for (const format of ['key', 'pkcs12']) {
      const res = await api('POST', `/api/v1/certificates/${ca.id}/download`, {
        key: a.adminKey,
        body: { format, ...(format === 'pkcs12' ? { password: 'password-1234' } : {}) },
      });
      // 403 as lib/http/error-codes.ts registers not_exportable (the code-signing keys answer the same)
      expect(res.status).toBe(403);
      expect(errorCode(res)).toBe('not_exportable');
    }
    // each account has its own CA
    const other = await api('GET', '/api/v1/certificates', { key: b.adminKey });
    expect(other.body.data.certificate_authority).toBeNull();
    expect((await api('GET', `/api/v1/certificates/${ca.id}`, { key: b.adminKey })).status).toBe(404);
  });
});

describe('POST /api/v1/certificates/enroll', () => {
  it('generates a key and issues a certificate with SANs, key usage and validity; it verifies against the account root', async () => {
    const cert = await enroll({
      subject: { common_name: 'api.example.test', organization: 'Example', country: 'DE' },
      sans: { dns: ['api.example.test', 'www.example.test'], ip: ['10.0.0.7'], email: ['ops@example.test'] },
      key_algorithm: 'rsa-2048',
      key_usage: ['digital_signature', 'key_encipherment'],
      extended_key_usage: ['server_auth'],
      validity_days: 30,
    });
    expect(cert).toMatchObject({
      type: 'certificate',
      status: 'active',
      source: 'issued',
      algorithm: 'rsa',
      bits: 2048,
      has_private_key: true,
      key_usage: ['digital_signature', 'key_encipherment'],
      extended_key_usage: ['server_auth'],
    });
    expect(cert.sans).toEqual({ dns: ['api.example.test', 'www.example.test'], ip: ['10.0.0.7'], email: ['ops@example.test'], uri: [] });
    expect(Date.parse(cert.not_after) - Date.parse(cert.not_before)).toBe(30 * 86400_000);
    expect(cert.days_until_expiry).toBeGreaterThanOrEqual(29);
    const leaf = file('leaf.pem', (await dl(cert.id, 'pem')).content);
    expect(verify(leaf, ['-purpose', 'sslserver']).stdout).toContain(': OK');
    const text = run('openssl', ['x509', '-in', leaf, '-noout', '-text']);
    expect(text).toContain('Subject: CN = api.example.test, O = Example, C = DE');
    expect(text).toContain('DNS:api.example.test, DNS:www.example.test, IP Address:10.0.0.7, email:ops@example.test');
    expect(text).toMatch(/Key Usage: critical\s+Digital Signature, Key Encipherment/);
    expect(text).toMatch(/Basic Constraints: critical\s+CA:FALSE/);
    expect(run('openssl', ['x509', '-in', leaf, '-noout', '-serial']).trim().toLowerCase()).toBe(`serial=${cert.serial_number}`);
    const fp = run('openssl', ['x509', '-in', leaf, '-noout', '-fingerprint', '-sha256']).trim().split('=')[1]!.replace(/:/g, '').toLowerCase();
    expect(cert.fingerprint).toBe(fp);
    // the certified key is the key the service holds
    const key = await dl(cert.id, 'key', exporter);
    track(key.content);
    expect(run('openssl', ['pkey', '-in', file('leaf.key', key.content), '-pubout'])).toBe(
      run('openssl', ['x509', '-in', leaf, '-noout', '-pubkey']),
    );
  });

  it('issues for a CSR made by openssl (the service never sees the key); default EKU; a DNS common name joins the SANs', async () => {
    const keyFile = join(dir, 'csr.key');
    const csr = run('openssl', [
      'req',
      '-new',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      keyFile,
      '-subj',
      '/CN=app.example.test',
    ]);
    const cert = await enroll({ csr, validity_days: 10 });
    expect(cert).toMatchObject({
      has_private_key: false,
      common_name: 'app.example.test',
      algorithm: 'ec',
      curve: 'P-256',
      extended_key_usage: ['server_auth', 'client_auth'],
    });
    expect(cert.sans.dns).toEqual(['app.example.test']);
    const leaf = file('csr-leaf.pem', cert.certificate_pem);
    expect(verify(leaf).stdout).toContain(': OK');
    expect(run('openssl', ['x509', '-in', leaf, '-noout', '-pubkey'])).toBe(run('openssl', ['pkey', '-in', keyFile, '-pubout']));
    const noKey = await api('GET', `/api/v1/certificates/${cert.id}/download?format=key`, { key: exporter });
    expect(noKey.status).toBe(400);
    expect(errorCode(noKey)).toBe('no_private_key');
  });

  it('400: corrupt CSR, CSR whose signature does not verify, bad SANs, validity bounds, unknown fields', async () => {
    const csr = run('openssl', ['req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'x.key'), '-subj', '/CN=x.example.test']);
    const der = Buffer.from(csr.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
    der[der.length - 5] = der[der.length - 5]! ^ 0xff; // a bit of the signature
    const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${der
      .toString('base64')
      .match(/.{1,64}/g)!
      .join('\n')}\n-----END CERTIFICATE REQUEST-----\n`;
    const cases: [Record<string, unknown>, string?][] = [
      [{ csr: '-----BEGIN CERTIFICATE REQUEST-----\nMIIBnope\n-----END CERTIFICATE REQUEST-----\n' }, 'invalid_csr'],
      [{ csr: tampered }, 'invalid_csr'],
      [{ csr, key_algorithm: 'ec-p256' }],
      [{ sans: { dns: ['not a name'] } }],
      [{ sans: { ip: ['300.1.1.1'] } }],
      [{ subject: { common_name: 'x' }, validity_days: 0 }],
      [{ subject: { common_name: 'x' }, validity_days: 826 }],
      [{ subject: { common_name: 'x' }, not_before: new Date(Date.now() + 200 * 86400_000).toISOString() }],
      [{ subject: { common_name: 'x' }, key_usage: ['key_cert_sign'] }],
      [{ subject: { common_name: 'x', country: 'Germany' } }],
      [{ subject: { common_name: 'x' }, is_ca: true }],
      [{}],
      [{ subject: { common_name: 'x' }, key_algorithm: 'dsa-1024' }],
    ];
    for (const [body, code] of cases) {
      const res = await api('POST', '/api/v1/certificates/enroll', { key: writer, body: { name: unique('bad'), ...body } });
      expect(res.status, `${JSON.stringify(body).slice(0, 80)} → ${res.text}`).toBe(400);
      if (code) expect(errorCode(res)).toBe(code);
    }
  });
});

describe('downloads', () => {
  it('PEM, DER, chain with certs:read; key and PKCS#12 need export:read; PKCS#12 by POST opens in openssl and keytool', async () => {
    const cert = await enroll({ subject: { common_name: 'dl.example.test' }, key_algorithm: 'ec-p384' });
    const der = await dl(cert.id, 'der');
    expect(der.encoding).toBe('base64');
    expect(run('openssl', ['x509', '-inform', 'DER', '-in', file('c.der', Buffer.from(der.content, 'base64')), '-noout', '-subject']).trim()).toBe(
      'subject=CN = dl.example.test',
    );
    const chain = await dl(cert.id, 'chain');
    expect(chain.content.match(/BEGIN CERTIFICATE/g)).toHaveLength(3);
    expect(
      spawnSync('openssl', ['verify', '-CAfile', root, '-untrusted', file('chain.pem', chain.content), file('leaf.pem', cert.certificate_pem)], {
        encoding: 'utf8',
      }).stdout,
    ).toContain(': OK');

    for (const format of ['key']) {
      const denied = await api('GET', `/api/v1/certificates/${cert.id}/download?format=${format}`, { key: reader });
      expect(denied.status).toBe(403);
      expect(errorCode(denied)).toBe('insufficient_scope');
    }
    const getP12 = await api('GET', `/api/v1/certificates/${cert.id}/download?format=pkcs12`, { key: exporter });
    expect(getP12.status).toBe(400);
    const password = `pw-${canary('certp12').slice(0, 30)}`;
    const deniedP12 = await api('POST', `/api/v1/certificates/${cert.id}/download`, { key: reader, body: { format: 'pkcs12', password } });
    expect(deniedP12.status).toBe(403);
    const p12 = await api('POST', `/api/v1/certificates/${cert.id}/download`, {
      key: exporter,
      body: { format: 'pkcs12', password, friendly_name: 'dl cert' },
    });
    expect(p12.status, p12.text).toBe(200);
    const p12File = file('c.p12', Buffer.from(p12.body.data.download.content, 'base64'));
    const out = run('openssl', ['pkcs12', '-in', p12File, '-passin', `pass:${password}`, '-nodes']);
    expect(out.match(/BEGIN CERTIFICATE/g)).toHaveLength(3);
    expect(out).toContain('BEGIN PRIVATE KEY');
    track(out.slice(out.indexOf('-----BEGIN PRIVATE KEY')));
    const ks = run('keytool', ['-list', '-v', '-storetype', 'PKCS12', '-keystore', p12File, '-storepass', password]);
    expect(ks).toContain('Alias name: dl cert');
    expect(ks).toContain('Entry type: PrivateKeyEntry');
    expect(ks).toContain('Certificate chain length: 3');
    // validation of the POST body
    for (const body of [
      { format: 'pkcs12' },
      { format: 'pkcs12', password: 'short' },
      { format: 'pkcs12', password: 'pässwörter-123' },
      { format: 'pem', password: 'password-123' },
      { format: 'zip' },
    ]) {
      expect((await api('POST', `/api/v1/certificates/${cert.id}/download`, { key: exporter, body })).status, JSON.stringify(body)).toBe(400);
    }
    expect((await api('GET', `/api/v1/certificates/${cert.id}/download?format=zip`, { key: reader })).status).toBe(400);
  });

  it('handler scopes and cross-account 404 on get and download', async () => {
    const cert = await enroll({ subject: { common_name: 'scope.example.test' } });
    const other = await a.key(['ssh:read']);
    expect((await api('GET', `/api/v1/certificates/${cert.id}`, { key: other })).status).toBe(403);
    expect((await api('GET', `/api/v1/certificates/${cert.id}/download`, { key: other })).status).toBe(403);
    const get = await api('GET', `/api/v1/certificates/${cert.id}`, { key: reader });
    expect(get.status).toBe(200);
    expect(get.text).not.toMatch(/PRIVATE KEY/);
    for (const [m, p, body] of [
      ['GET', `/api/v1/certificates/${cert.id}`],
      ['GET', `/api/v1/certificates/${cert.id}/download?format=pem`],
      ['POST', `/api/v1/certificates/${cert.id}/download`, { format: 'pkcs12', password: 'password-123' }],
      ['POST', `/api/v1/certificates/${cert.id}/renew`, {}],
      ['POST', `/api/v1/certificates/${cert.id}/revoke`, { reason: 'superseded' }],
    ] as const) {
      const res = await api(m, p, { key: b.adminKey, body });
      expect(res.status, `${m} ${p}`).toBe(404);
      expect(errorCode(res)).toBe('not_found');
    }
    const list = await api('GET', '/api/v1/certificates?limit=1000', { key: reader });
    expect(list.body.data.certificates.map((c: { id: string }) => c.id)).toContain(cert.id);
    expect(list.text).not.toMatch(/PRIVATE KEY/);
    expect((await api('GET', '/api/v1/certificates?limit=0', { key: reader })).status).toBe(400);
  });
});

describe('renew and revoke', () => {
  it('renews with a new key by default and with the same key on request: new serial, new version, still verifies', async () => {
    const cert = await enroll({ subject: { common_name: 'renew.example.test' }, validity_days: 20 });
    const same = await api('POST', `/api/v1/certificates/${cert.id}/renew`, { key: writer, body: { reuse_key: true, validity_days: 40 } });
    expect(same.status, same.text).toBe(200);
    const r1 = same.body.data.certificate;
    expect(r1).toMatchObject({
      id: cert.id,
      version: 2,
      public_key_fingerprint: cert.public_key_fingerprint,
      common_name: 'renew.example.test',
      validity_days: 40,
    });
    expect(r1.serial_number).not.toBe(cert.serial_number);
    expect(verify(file('r1.pem', r1.certificate_pem)).stdout).toContain(': OK');
    const fresh = await api('POST', `/api/v1/certificates/${cert.id}/renew`, { key: writer });
    expect(fresh.status, fresh.text).toBe(200);
    const r2 = fresh.body.data.certificate;
    expect(r2.version).toBe(3);
    expect(r2.public_key_fingerprint).not.toBe(cert.public_key_fingerprint);
    expect(r2.sans).toEqual(cert.sans);
    const key = await dl(cert.id, 'key', exporter);
    track(key.content);
    expect(run('openssl', ['pkey', '-in', file('r2.key', key.content), '-pubout'])).toBe(
      run('openssl', ['x509', '-in', file('r2.pem', r2.certificate_pem), '-noout', '-pubkey']),
    );
    for (const body of [{ reuse_key: 'yes' }, { csr: 'x', reuse_key: true }, { validity_days: 9999 }]) {
      expect((await api('POST', `/api/v1/certificates/${cert.id}/renew`, { key: writer, body })).status).toBe(400);
    }
  });

  it('revocation with a reason code appears in the CRL; openssl refuses the revoked certificate and accepts another', async () => {
    const revoker = await a.key(['certs:revoke']);
    const good = await enroll({ subject: { common_name: 'good.example.test' } });
    const bad = await enroll({ subject: { common_name: 'bad.example.test' } });
    const res = await api('POST', `/api/v1/certificates/${bad.id}/revoke`, { key: revoker, body: { reason: 'key_compromise' } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.certificate).toMatchObject({ status: 'revoked', revocation_reason: 'key_compromise' });
    const again = await api('POST', `/api/v1/certificates/${bad.id}/revoke`, { key: revoker, body: { reason: 'superseded' } });
    expect(again.status).toBe(409);
    expect(errorCode(again)).toBe('already_revoked');
    expect((await api('POST', `/api/v1/certificates/${good.id}/revoke`, { key: revoker, body: { reason: 'because' } })).status).toBe(400);
    const renewRevoked = await api('POST', `/api/v1/certificates/${bad.id}/renew`, { key: writer, body: {} });
    expect(renewRevoked.status).toBe(409);

    const crl = await dl(good.id, 'crl');
    const crlFile = file('ca.crl', crl.content);
    const crlText = run('openssl', ['crl', '-in', crlFile, '-noout', '-text']);
    expect(crlText).toContain(`Serial Number: ${bad.serial_number.toUpperCase()}`);
    expect(crlText).toMatch(new RegExp(`Serial Number: ${bad.serial_number.toUpperCase()}[\\s\\S]*?Key Compromise`));
    expect(crlText).not.toContain(good.serial_number.toUpperCase());
    expect(crlText).toMatch(/X509v3 CRL Number/);
    // the CRL is signed by the intermediate
    expect(spawnSync('openssl', ['crl', '-in', crlFile, '-noout', '-CAfile', inter], { encoding: 'utf8' }).stderr).toMatch(/verify OK/);
    const refused = verify(file('bad.pem', bad.certificate_pem), ['-crl_check', '-CRLfile', crlFile]);
    expect(refused.status).not.toBe(0);
    expect(refused.stdout + refused.stderr).toContain('certificate revoked');
    expect(verify(file('good.pem', good.certificate_pem), ['-crl_check', '-CRLfile', crlFile]).stdout).toContain(': OK');
    // the same CRL from the CA's own id
    const list = await api('GET', '/api/v1/certificates', { key: reader });
    const viaCa = await dl(list.body.data.certificate_authority.id, 'crl');
    expect(run('openssl', ['crl', '-in', file('ca2.crl', viaCa.content), '-noout', '-text'])).toContain(bad.serial_number.toUpperCase());
    // revoke needs certs:revoke
    expect((await api('POST', `/api/v1/certificates/${good.id}/revoke`, { key: writer, body: {} })).status).toBe(403);
  });
});

describe('expiry', () => {
  it('certificate.expiring once per certificate and threshold; a renewal starts afresh', async () => {
    const { emitExpiringCertificates } = await import('../../functions/certificates/expiry.js');
    const { thresholdFor } = await import('../../lib/events/expiry.js');
    const { db, tableName } = await import('../../lib/store/client.js');
    const acct = await newAccount('certs-exp');
    const cert = await (async () => {
      const res = await api('POST', '/api/v1/certificates/enroll', {
        key: acct.adminKey,
        body: { name: 'soon', subject: { common_name: 'soon.example.test' }, validity_days: 60 },
      });
      expect(res.status).toBe(201);
      return res.body.data.certificate;
    })();
    const notAfter = new Date(cert.not_after);
    expect(thresholdFor(notAfter, new Date(notAfter.getTime() - 40 * 86400_000), [30, 7, 1])).toBeUndefined();
    expect(thresholdFor(notAfter, new Date(notAfter.getTime() - 5 * 86400_000), [30, 7, 1])).toBe(7);
    const head = async () =>
      (
        await db().send(
          new GetCommand({ TableName: tableName(), Key: { pk: `T#${acct.tenantId}`, sk: `R#certificate#${cert.id}` }, ConsistentRead: true }),
        )
      ).Item!;

    expect(await emitExpiringCertificates(acct.tenantId, { now: new Date(notAfter.getTime() - 40 * 86400_000) })).toEqual({ emitted: 0, checked: 1 });
    expect(await emitExpiringCertificates(acct.tenantId, { now: new Date(notAfter.getTime() - 20 * 86400_000) })).toEqual({ emitted: 1, checked: 1 });
    expect((await head()).expiry_notice).toBe(`${cert.serial_number}:30`);
    expect(await emitExpiringCertificates(acct.tenantId, { now: new Date(notAfter.getTime() - 19 * 86400_000) })).toEqual({ emitted: 0, checked: 1 });
    expect(await emitExpiringCertificates(acct.tenantId, { now: new Date(notAfter.getTime() - 5 * 86400_000) })).toEqual({ emitted: 1, checked: 1 });
    expect((await head()).expiry_notice).toBe(`${cert.serial_number}:7`);
    // past not_after nothing more is announced
    expect(await emitExpiringCertificates(acct.tenantId, { now: new Date(notAfter.getTime() + 86400_000) })).toEqual({ emitted: 0, checked: 1 });
    const renewed = await api('POST', `/api/v1/certificates/${cert.id}/renew`, { key: acct.adminKey, body: { validity_days: 10 } });
    expect(renewed.status).toBe(200);
    expect((await head()).expiry_notice).toBeUndefined();
    expect(await emitExpiringCertificates(acct.tenantId)).toEqual({ emitted: 1, checked: 1 });
    // the view does not show the notice bookkeeping
    const get = await api('GET', `/api/v1/certificates/${cert.id}`, { key: acct.adminKey });
    expect(get.body.data.certificate.expiry_notice).toBeUndefined();
  });
});

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api, newAccount, unique, type TestAccount } from '../helpers/api.js';

/**
 * Revocation as a relying party checks it with OpenSSL and nothing else: a certificate of
 * the account CA names its CRL (CRL Distribution Points) and its issuer (Authority
 * Information Access), both fetched over plain HTTP without credentials (the local
 * runtime's /pki/ files; S3 objects in AWS), and `openssl verify -crl_check` with that CRL
 * refuses every serial of a revoked certificate, the ones before its renewals included.
 */
let a: TestAccount;
let writer: string;
let dir: string;

beforeAll(async () => {
  a = await newAccount('interop-pki');
  writer = await a.key(['certs:read', 'certs:write', 'certs:revoke']);
  dir = mkdtempSync(join(tmpdir(), 'interop-pki-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const file = (name: string, content: string | Buffer) => {
  const p = join(dir, `${unique('f')}-${name}`);
  writeFileSync(p, content);
  return p;
};
const openssl = (args: string[]) => execFileSync('openssl', args, { encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });

/** The URIs a certificate names for its CRL and its issuer, read by openssl. */
function publishedUrls(pem: string): { crl: string; issuer: string } {
  const text = openssl(['x509', '-in', file('leaf.pem', pem), '-noout', '-text']);
  const crl = /X509v3 CRL Distribution Points:[\s\S]*?URI:(\S+)/.exec(text)?.[1];
  const issuer = /CA Issuers - URI:(\S+)/.exec(text)?.[1];
  if (!crl || !issuer) throw new Error(`no CRL Distribution Points or CA Issuers in:\n${text}`);
  return { crl, issuer };
}

/** A GET with no credential at all, as a relying party fetches. */
async function fetchPublic(url: string) {
  const res = await fetch(url);
  return { status: res.status, type: res.headers.get('content-type'), body: Buffer.from(await res.arrayBuffer()) };
}

/**
 * The local runtime publishes to files its gateway serves. As deployed, the files are S3
 * objects (PKI_PUBLISH_BUCKET): the artifact project runs this once the templates wire a
 * bucket and PKI_PUBLIC_BASE_URL (infra/, docs/operations.md "Published CRLs").
 */
describe.runIf(inject('runtime') !== 'artifact')('certificates name where revocation is published; revoking covers every serial', () => {
  it('CDP and AIA fetched without credentials; openssl verify -crl_check refuses the current and the earlier serial after revocation', async () => {
    const made = await api('POST', '/api/v1/certificates/enroll', {
      key: writer,
      body: { name: unique('pki'), subject: { common_name: 'pki.interop.test' } },
    });
    expect(made.status, made.text).toBe(201);
    const first = made.body.data.certificate;
    const urls = publishedUrls(first.certificate_pem);
    expect(urls.crl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/pki\/[0-9a-f-]{36}\.crl$/);
    expect(urls.issuer).toBe(urls.crl.replace(/\.crl$/, '.crt'));

    const list = await api('GET', '/api/v1/certificates', { key: writer });
    const ca = list.body.data.certificate_authority;
    const root = file('root.pem', ca.root.certificate_pem);
    // the issuer certificate from the AIA URL is the intermediate (DER), and chains to the root
    const issuer = await fetchPublic(urls.issuer);
    expect(issuer).toMatchObject({ status: 200, type: 'application/pkix-cert' });
    const interPem = openssl(['x509', '-inform', 'DER', '-in', file('inter.der', issuer.body)]);
    expect(
      openssl(['x509', '-in', file('i.pem', interPem), '-noout', '-fingerprint', '-sha256'])
        .replace(/:/g, '')
        .toLowerCase(),
    ).toContain(ca.intermediate.fingerprint);
    const inter = file('inter.pem', interPem);

    const crlNow = async () => {
      const crl = await fetchPublic(urls.crl);
      expect(crl).toMatchObject({ status: 200, type: 'application/pkix-crl' });
      const path = file('ca.crl', crl.body);
      // the CRL is signed by the intermediate
      expect(spawnSync('openssl', ['crl', '-inform', 'DER', '-in', path, '-noout', '-CAfile', inter], { encoding: 'utf8' }).stderr).toMatch(
        /verify OK/,
      );
      return file('ca.crl.pem', openssl(['crl', '-inform', 'DER', '-in', path]));
    };
    const verify = (pem: string, crl: string) =>
      spawnSync('openssl', ['verify', '-crl_check', '-CRLfile', crl, '-CAfile', root, '-untrusted', inter, file('leaf.pem', pem)], {
        encoding: 'utf8',
      });

    expect(verify(first.certificate_pem, await crlNow()).stdout).toContain(': OK');

    const renewed = await api('POST', `/api/v1/certificates/${first.id}/renew`, { key: writer, body: {} });
    expect(renewed.status, renewed.text).toBe(200);
    const second = renewed.body.data.certificate;
    expect(second.serial_number).not.toBe(first.serial_number);
    expect(second.earlier_serials.map((e: { serial_number: string }) => e.serial_number)).toEqual([first.serial_number]);
    expect(publishedUrls(second.certificate_pem)).toEqual(urls);

    const revoked = await api('POST', `/api/v1/certificates/${first.id}/revoke`, { key: writer, body: { reason: 'key_compromise' } });
    expect(revoked.status, revoked.text).toBe(200);
    const crl = await crlNow();
    const crlText = openssl(['crl', '-in', crl, '-noout', '-text']);
    for (const serial of [first.serial_number, second.serial_number]) expect(crlText).toContain(`Serial Number: ${serial.toUpperCase()}`);
    for (const pem of [first.certificate_pem, second.certificate_pem]) {
      const refused = verify(pem, crl);
      expect(refused.status).not.toBe(0);
      expect(refused.stdout + refused.stderr).toMatch(/certificate revoked/);
    }
  });

  it('only CA files are served under /pki/: an unknown CA or another name is the gateway 404', async () => {
    const { baseUrl } = await import('../helpers/api.js');
    for (const path of ['/pki/00000000-0000-4000-8000-000000000000.crl', '/pki/secrets.txt', '/pki/%2e%2e/package.json']) {
      const res = await fetch(`${baseUrl()}${path}`);
      expect(res.status, path).toBe(404);
      expect(((await res.json()) as { code: string }).code).toBe('route_not_found');
    }
  });
});

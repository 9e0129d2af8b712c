import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { get as httpsGet } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { api, baseUrl, errorCode, newAccount, unique, type TestAccount } from '../helpers/api.js';

/**
 * ACME enrollment end-to-end against pebble (Let's Encrypt's ACME test server, Debian
 * package `pebble`): pebble validates http-01 for `localhost` on the local gateway's port,
 * so the key authorization must come from GET /.well-known/acme-challenge/{token}.
 * Pebble's HTTPS listener gets a certificate made here with openssl; the enrollment trusts
 * it through `acme.directory_ca_pem`. PEBBLE_VA_ALWAYS_VALID=0: validation is real.
 */
let a: TestAccount;
let dir: string;
let pebble: ChildProcess;
let directoryUrl: string;
let managementUrl: string;
let tlsCert: string;
let pebbleLog = '';

const freePort = () =>
  new Promise<number>((ok, fail) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => ok(port));
    });
    s.on('error', fail);
  });

const fetchWithCa = (url: string, ca: string) =>
  new Promise<string>((ok, fail) => {
    httpsGet(url, { ca }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => ok(body));
    }).on('error', fail);
  });

beforeAll(async () => {
  const which = spawnSync('sh', ['-c', 'command -v pebble']);
  if (which.status !== 0) throw new Error('pebble is not installed (apt-get install pebble): the ACME tests need it');
  a = await newAccount('acme');
  dir = mkdtempSync(join(tmpdir(), 'pebble-'));
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '2',
      '-subj',
      '/CN=pebble test',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ],
    { stdio: 'ignore' },
  );
  tlsCert = readFileSync(certFile, 'utf8');
  const [listen, management, tls] = [await freePort(), await freePort(), await freePort()];
  const gatewayPort = Number(new URL(baseUrl()).port);
  const config = {
    pebble: {
      listenAddress: `127.0.0.1:${listen}`,
      managementListenAddress: `127.0.0.1:${management}`,
      certificate: certFile,
      privateKey: keyFile,
      // http-01 is validated against the local gateway, which serves the challenge route
      httpPort: gatewayPort,
      tlsPort: tls,
      ocspResponderURL: '',
      externalAccountBindingRequired: false,
    },
  };
  const configFile = join(dir, 'pebble-config.json');
  writeFileSync(configFile, JSON.stringify(config));
  pebble = spawn('pebble', ['-config', configFile], {
    env: { ...process.env, PEBBLE_VA_NOSLEEP: '1', PEBBLE_VA_ALWAYS_VALID: '0', PEBBLE_WFE_NONCEREJECT: '0', PEBBLE_AUTHZREUSE: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`pebble did not start:\n${pebbleLog}`)), 20_000);
    const onData = (c: Buffer) => {
      pebbleLog += c.toString();
      if (pebbleLog.includes('ACME directory available')) {
        clearTimeout(timer);
        ok();
      }
    };
    pebble.stdout!.on('data', onData);
    pebble.stderr!.on('data', onData);
    pebble.on('exit', (code) => fail(new Error(`pebble exited with ${code}:\n${pebbleLog}`)));
  });
  directoryUrl = `https://127.0.0.1:${listen}/dir`;
  managementUrl = `https://127.0.0.1:${management}`;
});

afterAll(async () => {
  pebble?.kill('SIGTERM');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const acme = () => ({ directory_url: directoryUrl, directory_ca_pem: tlsCert, email: 'ops@example.test' });

describe('ACME enrollment (http-01) against pebble', () => {
  it('issues a certificate through the challenge route; the chain verifies against pebble’s root; renew and revoke go to pebble', async () => {
    const logBefore = readFileSync(inject('logFile'), 'utf8').length;
    const res = await api('POST', '/api/v1/certificates/enroll', {
      key: a.adminKey,
      body: { name: unique('acme'), sans: { dns: ['localhost'] }, acme: acme() },
    });
    expect(res.status, `${res.text}\n${pebbleLog.slice(-2000)}`).toBe(201);
    const cert = res.body.data.certificate;
    expect(cert).toMatchObject({ source: 'acme', has_private_key: true, ca_id: null, status: 'active' });
    expect(cert.sans.dns).toEqual(['localhost']);
    expect(cert.issuer).toContain('Pebble Intermediate CA');
    expect(cert.acme).toMatchObject({ directory_url: directoryUrl });

    // the validation requests reached the public challenge route and were answered
    const log = readFileSync(inject('logFile'), 'utf8').slice(logBefore);
    const hits = log.split('\n').filter((l) => l.includes('/.well-known/acme-challenge/{token}'));
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.some((l) => /"status":200/.test(l))).toBe(true);
    expect(pebbleLog).toMatch(/validat/i);

    // openssl: leaf + pebble's chain verify against pebble's root (from its management API)
    const rootPem = await fetchWithCa(`${managementUrl}/roots/0`, tlsCert);
    const rootFile = join(dir, 'root.pem');
    writeFileSync(rootFile, rootPem);
    const chain = await api('GET', `/api/v1/certificates/${cert.id}/download?format=chain`, { key: a.adminKey });
    const chainFile = join(dir, 'chain.pem');
    writeFileSync(chainFile, chain.body.data.download.content);
    const leafFile = join(dir, 'leaf.pem');
    writeFileSync(leafFile, cert.certificate_pem);
    const v = spawnSync('openssl', ['verify', '-CAfile', rootFile, '-untrusted', chainFile, leafFile], { encoding: 'utf8' });
    expect(v.stdout, v.stderr).toContain(': OK');
    // the challenge record is gone once the order is done
    // (pebble logs each validation URL: "Attempting to validate w/ HTTP: http://…/.well-known/acme-challenge/<token>")
    const token = /acme-challenge\/([A-Za-z0-9_-]+)/.exec(pebbleLog)?.[1];
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const gone = await api('GET', `/.well-known/acme-challenge/${token}`);
    expect(gone.status).toBe(404);
    expect(errorCode(gone)).toBe('not_found');
    // CRLs are the external CA's business
    const crl = await api('GET', `/api/v1/certificates/${cert.id}/download?format=crl`, { key: a.adminKey });
    expect(crl.status).toBe(400);
    expect(errorCode(crl)).toBe('no_crl');

    const renewed = await api('POST', `/api/v1/certificates/${cert.id}/renew`, { key: a.adminKey, body: { reuse_key: true } });
    expect(renewed.status, renewed.text).toBe(200);
    expect(renewed.body.data.certificate).toMatchObject({ version: 2, public_key_fingerprint: cert.public_key_fingerprint, source: 'acme' });
    expect(renewed.body.data.certificate.serial_number).not.toBe(cert.serial_number);

    const revoked = await api('POST', `/api/v1/certificates/${cert.id}/revoke`, { key: a.adminKey, body: { reason: 'cessation_of_operation' } });
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body.data.certificate.status).toBe('revoked');
    // pebble knows: its certificate status endpoint reports the serial as revoked
    const status = await fetchWithCa(`${managementUrl}/cert-status-by-serial/${renewed.body.data.certificate.serial_number}`, tlsCert);
    expect(JSON.parse(status).Status).toBe('Revoked');
  });

  it('issues for a CSR made by openssl (its names as subjectAltNames; a CN-only CSR is refused with 400)', async () => {
    const csrFor = (...ext: string[]) =>
      execFileSync(
        'openssl',
        [
          'req',
          '-new',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:P-256',
          '-nodes',
          '-keyout',
          join(dir, 'csr.key'),
          '-subj',
          '/CN=localhost',
          ...ext,
        ],
        { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
      );
    const cnOnly = await api('POST', '/api/v1/certificates/enroll', {
      key: a.adminKey,
      body: { name: unique('acme-csr'), csr: csrFor(), acme: acme() },
    });
    expect(cnOnly.status, cnOnly.text).toBe(400);
    expect(errorCode(cnOnly)).toBe('invalid_csr');
    // no e-mail this time: the account registered by the first enrollment is reused
    const { email: _email, ...noEmail } = acme();
    const res = await api('POST', '/api/v1/certificates/enroll', {
      key: a.adminKey,
      body: { name: unique('acme-csr'), csr: csrFor('-addext', 'subjectAltName=DNS:localhost'), acme: noEmail },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.certificate).toMatchObject({ has_private_key: false, source: 'acme', sans: { dns: ['localhost'] } });
    expect(execFileSync('openssl', ['pkey', '-in', join(dir, 'csr.key'), '-pubout'], { encoding: 'utf8' })).toBe(
      res.body.data.certificate.public_key,
    );
  });

  it('a name pebble cannot validate fails with 502 acme_failed and the directory’s reason', async () => {
    const res = await api('POST', '/api/v1/certificates/enroll', {
      key: a.adminKey,
      body: { name: unique('acme-bad'), sans: { dns: ['no-such-host.invalid'] }, acme: acme() },
    });
    expect(res.status, res.text).toBe(502);
    expect(errorCode(res)).toBe('acme_failed');
    expect(res.body.error).toMatch(/ACME enrollment failed/);
  });

  it('400: non-https or blocked directory URLs, non-DNS names, ACME with validity settings', async () => {
    const cases: Record<string, unknown>[] = [
      { sans: { dns: ['localhost'] }, acme: { directory_url: directoryUrl.replace('https', 'http') } },
      { sans: { dns: ['localhost'] }, acme: { directory_url: 'https://169.254.169.254/dir' } },
      { sans: { dns: ['localhost'] }, acme: { directory_url: 'https://10.1.2.3/dir' } },
      { sans: { ip: ['127.0.0.1'] }, acme: acme() },
      { sans: { dns: ['localhost'] }, validity_days: 30, acme: acme() },
      { sans: { dns: ['localhost'] }, acme: { ...acme(), extra: 1 } },
      { sans: { dns: ['localhost'] }, acme: { directory_url: 'not a url' } },
    ];
    for (const body of cases) {
      const res = await api('POST', '/api/v1/certificates/enroll', { key: a.adminKey, body: { name: unique('acme-400'), ...body } });
      expect(res.status, `${JSON.stringify(body).slice(0, 120)} → ${res.text}`).toBe(400);
    }
  });
});

describe('GET /.well-known/acme-challenge/{token} (public)', () => {
  it('404 for an unknown token, 400 for a malformed one; no credentials needed', async () => {
    const unknown = await api('GET', `/.well-known/acme-challenge/${'A'.repeat(43)}`);
    expect(unknown.status).toBe(404);
    expect(errorCode(unknown)).toBe('not_found');
    expect((await api('GET', '/.well-known/acme-challenge/short')).status).toBe(400);
  });
});

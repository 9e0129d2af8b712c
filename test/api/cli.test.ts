import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createPublicKey, verify } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, baseUrl, canary, newAccount, type TestAccount, unique } from '../helpers/api.js';
import { admitted, librarySession } from './sign-in.helpers.js';
import { scaled } from '../helpers/timeouts.js';
import { launchChromium } from '../helpers/browser.js';
import { testDirectory } from '../helpers/scratch.js';

/**
 * The command-line client end to end: the shipped bundle (bin/secrets.cjs, what `npm i -g`
 * installs) runs as a child process against the local gateway. It logs in through the CLI
 * login flow (the person approves the code with the sign-in page's own call), sets, gets,
 * injects a secret into `run -- env`, logs out, and then fails with a clear message.
 */
const BIN = join(import.meta.dirname, '..', '..', 'bin', 'secrets.cjs');
let a: TestAccount;
let home: string;
let configHome: string;

const baseEnv = (): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  HOME: home,
  XDG_CONFIG_HOME: configHome,
  SECRETS_API_URL: baseUrl(),
});

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function start(args: string[], env: NodeJS.ProcessEnv = baseEnv()): { child: ChildProcess; done: Promise<Run> } {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const done = new Promise<Run>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, done };
}

/** The user code in the URL the CLI printed. */
const printedCode = (url: string) => new URL(url).searchParams.get('user_code');
const cli = (args: string[], env?: NodeJS.ProcessEnv) => start(args, env).done;

/**
 * The person's side, in headless Chromium: the sign-in page at the URL the CLI printed, the
 * code prefilled from it, signed in (the page's token field, which its passkey sign-in
 * fills), and the Approve button (the page calls GET /auth/cli/login?user_code&decision with
 * the session's token under its Content-Security-Policy).
 */
async function approveInTheBrowser(url: string, accessToken: string): Promise<string> {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    await page.goto(url);
    await page.waitForSelector('body[data-state="ready"]');
    const shown = await page.inputValue('#user_code');
    await page.fill('#token', accessToken);
    await page.click('#cli-approve');
    await page.waitForFunction(() => document.body.dataset.state !== 'ready', undefined, { timeout: 15_000 });
    expect(await page.getAttribute('body', 'data-state'), (await page.textContent('#status')) ?? '').toBe('cli-approved');
    expect(await page.textContent('#status')).toBe('CLI login approved: return to your terminal.');
    return shown;
  } finally {
    await browser.close();
  }
}

beforeAll(async () => {
  a = await newAccount('cli-e2e');
  home = mkdtempSync(join(tmpdir(), 'cli-home-'));
  configHome = join(home, 'config');
});

afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('secrets CLI', () => {
  it(
    'login, set, get, run -- env, logout, then a clear failure',
    async () => {
      // not logged in yet
      const before = await cli(['secrets', 'get', 'anything']);
      expect(before.code).toBe(1);
      expect(before.stderr.trim()).toBe('error: not logged in: run `secrets login` (or set SECRETS_API_KEY to an API key)');

      // login: the CLI shows the URL with the code and polls until the person approves
      const login = start(['login']);
      const url = await new Promise<string>((resolve, reject) => {
        let seen = '';
        login.child.stderr!.on('data', (d) => {
          seen += d;
          const m = /open (\S+user_code=\S+)/.exec(seen);
          if (m) resolve(m[1]!);
        });
        login.child.on('close', () => reject(new Error(`login ended before showing a code: ${seen}`)));
      });
      expect(url.startsWith(`${baseUrl()}/api/v1/auth/oidc/login?user_code=`)).toBe(true);
      const page = await librarySession(a.tenantId, a.adminEmail);
      const shown = await approveInTheBrowser(url, page.access_token);
      expect(printedCode(url)).toBe(shown);
      const logged = await login.done;
      expect(logged.code, logged.stderr).toBe(0);
      expect(logged.stdout).toMatch(/^Logged in \(session [0-9a-f-]{36}\)/);

      const file = join(configHome, 'secrets-cli', 'credentials.json');
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(statSync(join(configHome, 'secrets-cli')).mode & 0o777).toBe(0o700);
      const stored = JSON.parse(readFileSync(file, 'utf8'));
      expect(stored.refresh_token).toMatch(/^scr_/);

      const who = await cli(['--json', 'whoami']);
      expect(who.code, who.stderr).toBe(0);
      expect(JSON.parse(who.stdout)).toMatchObject({ kind: 'access_token', user: a.adminEmail, account_id: a.tenantId, via: 'login' });

      // set (create), get, set again (update through the ETag it read)
      const name = unique('cli-e2e');
      const value = canary('cli');
      const created = await cli(['secrets', 'set', name, value]);
      expect(created.code, created.stderr).toBe(0);
      expect(created.stdout.trim()).toBe(`Created ${name} (version 1)`);
      expect(created.stdout).not.toContain(value);
      const got = await cli(['secrets', 'get', name]);
      expect(got.stdout).toBe(`${value}\n`);
      const value2 = canary('cli2');
      const updated = await cli(['--json', 'secrets', 'set', name, value2]);
      expect(JSON.parse(updated.stdout)).toMatchObject({ name, version: 2, created: false });
      // a change naming an older version is refused, in one line that says what to do
      const stale = await cli(['secrets', 'set', name, 'x', '--if-match', JSON.parse(updated.stdout).etag.replace('.2"', '.1"')]);
      expect(stale.code).toBe(1);
      expect(stale.stderr.trim().split('\n')).toHaveLength(1);
      expect(stale.stderr).toMatch(/^error: .*read it again and retry \(stale_etag, request /);

      // run -- env: the value reaches the child's environment, never the CLI's own output
      const envName = name.toUpperCase().replace(/-/g, '_');
      const run = await cli(['run', '--secret', name, '--', 'env']);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout.split('\n')).toContain(`${envName}=${value2}`);
      expect(run.stderr).not.toContain(value2);
      const renamed = await cli(['run', '-s', `${name}=APP_TOKEN`, '--', 'sh', '-c', 'test "$APP_TOKEN" = "$0" && exit 7', value2]);
      expect(renamed.code).toBe(7);

      const list = await cli(['--json', 'secrets', 'list']);
      expect(JSON.parse(list.stdout).map((s: { name: string }) => s.name)).toContain(name);
      expect(list.stdout).not.toContain(value2);

      // logout ends the session on the server and forgets it here
      const out = await cli(['logout']);
      expect(out.code, out.stderr).toBe(0);
      expect(out.stdout.trim()).toBe('Logged out: the session is ended.');
      expect(await admitted(stored.access_token)).toBe(false);
      const after = await cli(['secrets', 'get', name]);
      expect(after.code).toBe(1);
      expect(after.stdout).toBe('');
      expect(after.stderr.trim()).toBe('error: not logged in: run `secrets login` (or set SECRETS_API_KEY to an API key)');
      const afterJson = await cli(['--json', 'secrets', 'get', name]);
      expect(JSON.parse(afterJson.stdout).error).toMatch(/not logged in/);
    },
    scaled(60_000),
  );

  it(
    'works with an API key (SECRETS_API_KEY): export, delete; unknown names and bad input fail in one line',
    async () => {
      const env = { ...baseEnv(), SECRETS_API_KEY: a.adminKey, XDG_CONFIG_HOME: testDirectory('cli-cfg-') };
      const name = unique('cli-key');
      const value = canary('key');
      expect((await cli(['secrets', 'set', name, '--data', JSON.stringify({ user: 'app', password: value })], env)).code).toBe(0);
      const exported = await cli(['export', '--format', 'json', '--secret', name], env);
      expect(exported.code, exported.stderr).toBe(0);
      const prefix = name.toUpperCase().replace(/-/g, '_');
      expect(JSON.parse(exported.stdout)).toEqual({ [`${prefix}_USER`]: 'app', [`${prefix}_PASSWORD`]: value });
      const dotenv = await cli(['export', '-s', `${name}=DB`], env);
      expect(dotenv.stdout).toBe(`DB_USER="app"\nDB_PASSWORD="${value}"\n`);

      const who = await cli(['--json', 'whoami'], env);
      expect(JSON.parse(who.stdout)).toMatchObject({ kind: 'api_key', account_id: a.tenantId, via: 'api_key' });

      expect((await cli(['secrets', 'delete', name], env)).stdout.trim()).toBe(`Deleted ${name}`);
      const gone = await cli(['secrets', 'get', name], env);
      expect(gone.code).toBe(1);
      expect(gone.stderr).toMatch(/^error: .*check the name .*\(not_found, request /);

      const noCommand = await cli(['run', '--secret', name, '--', 'definitely-not-a-command-xyz'], env);
      expect(noCommand.code).toBe(1);
      const noWhat = await cli(['run', '--', 'env'], env);
      expect(noWhat.stderr.trim()).toBe(
        'error: name what to inject: --secret NAME[=ENV_VAR] and/or --variable NAME (repeatable), or --container NAME, --tag TAG, --all',
      );
      const badKey = await cli(['secrets', 'list'], { ...env, SECRETS_API_KEY: `scm_aaaaaaaa_${'0'.repeat(43)}` });
      expect(badKey.code).toBe(1);
      expect(badKey.stderr).toMatch(/^error: .*run `secrets login` again \(or check SECRETS_API_KEY\)/);
      const noUrl = await cli(['secrets', 'list'], {
        PATH: process.env.PATH,
        HOME: home,
        XDG_CONFIG_HOME: env.XDG_CONFIG_HOME,
        SECRETS_API_KEY: a.adminKey,
      });
      expect(noUrl.stderr.trim()).toMatch(/^error: no API address: set SECRETS_API_URL/);
    },
    scaled(60_000),
  );

  it(
    "an API behind a private CA's certificate: the TLS refusal names NODE_EXTRA_CA_CERTS, and with it the CLI works (vault's VAULT_CACERT)",
    async () => {
      const dir = testDirectory('cli-ca-');
      const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
      const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
      openssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=cli test private CA');
      openssl('req', ...ec, '-keyout', 'api.key', '-out', 'api.csr', '-subj', '/CN=127.0.0.1');
      writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1\n');
      openssl(
        'x509',
        '-req',
        '-in',
        'api.csr',
        '-CA',
        'ca.pem',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-out',
        'api.pem',
        '-days',
        '1',
        '-extfile',
        'ext.cnf',
      );
      // a TLS front with the private CA's certificate, forwarding to the local gateway
      const front = createServer({ key: readFileSync(join(dir, 'api.key')), cert: readFileSync(join(dir, 'api.pem')) }, (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', async () => {
          const headers = Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k)) as [string, string][];
          const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
          const answer = await fetch(`${baseUrl()}${req.url}`, { method: req.method, headers, body });
          const out = Buffer.from(await answer.arrayBuffer());
          res.writeHead(answer.status, {
            'content-type': answer.headers.get('content-type') ?? 'application/octet-stream',
            'content-length': out.length,
          });
          res.end(out);
        });
      });
      await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
      try {
        const env = {
          ...baseEnv(),
          SECRETS_API_URL: `https://127.0.0.1:${(front.address() as AddressInfo).port}`,
          SECRETS_API_KEY: a.adminKey,
          XDG_CONFIG_HOME: testDirectory('cli-cfg-'),
        };
        const untrusted = await cli(['secrets', 'list'], env);
        expect(untrusted.code, untrusted.stderr).toBe(1);
        expect(untrusted.stderr.trim()).toMatch(
          /^error: the TLS certificate of https:\/\/127\.0\.0\.1:\d+ is not trusted \(\w+\): if a private CA issued it, set NODE_EXTRA_CA_CERTS to that CA's PEM file/,
        );
        const trusted = await cli(['--json', 'secrets', 'list'], { ...env, NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem') });
        expect(trusted.code, trusted.stderr).toBe(0);
        expect(Array.isArray(JSON.parse(trusted.stdout))).toBe(true);
      } finally {
        await new Promise((resolve) => front.close(resolve));
      }
    },
    scaled(60_000),
  );

  it("sign: operation-only signing of a file (the signature verifies with the key's public key)", async () => {
    const env = { ...baseEnv(), SECRETS_API_KEY: a.adminKey, XDG_CONFIG_HOME: testDirectory('cli-cfg-') };
    const key = await api('POST', '/api/v1/code-signing-keys', {
      key: a.adminKey,
      body: { name: unique('cli-sign'), backend: 'pkcs11', algorithm: 'EC_P256' },
    });
    expect(key.status, key.text).toBe(201);
    const { id, public_key } = key.body.data.code_signing_key as { id: string; public_key: string };
    const file = join(home, 'artifact.bin');
    writeFileSync(file, 'release 1.0');
    const signed = await cli(['--json', 'sign', file, '--key', id, '--backend', 'pkcs11', '--purpose', 'cli e2e'], env);
    expect(signed.code, signed.stderr).toBe(0);
    const out = JSON.parse(signed.stdout) as { signature: string; algorithm: string; key_id: string };
    expect(out).toMatchObject({ key_id: id, algorithm: 'ECDSA_P256_SHA256' });
    expect(verify('sha256', readFileSync(file), createPublicKey(public_key), Buffer.from(out.signature, 'base64'))).toBe(true);
    const missing = await cli(['sign', join(home, 'nope.bin'), '--key', id, '--backend', 'pkcs11'], env);
    expect(missing.stderr.trim()).toBe(`error: cannot read ${join(home, 'nope.bin')}: check the path`);
    const unknownKey = await cli(['sign', file, '--key', '00000000-0000-7000-8000-000000000000', '--backend', 'pkcs11'], env);
    expect(unknownKey.code).toBe(1);
    expect(unknownKey.stderr).toMatch(/^error: .*\(not_found, request /);
  });
});

import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../lib/auth/api-keys.js';
import { freePort } from '../../scripts/local/ports.js';
import { groupMembers, spawnGroup, stopGroup } from '../setup/processes.js';
import { scaled } from '../helpers/timeouts.js';
import { launchChromium, requireChromium } from '../helpers/browser.js';

/**
 * Issue 33: passkeys work on the URL `npm start` prints. This runs `npm start` itself, as a
 * person does (its own ports, data in memory, no PUBLIC_BASE_URL: the suite's runtime sets
 * one, test/setup/runtime.ts), takes the URL from its "listening on" line, and in headless
 * Chromium with the DevTools virtual authenticator does what a new admin does there: sets a
 * first password with the operator's reset token (SRP in the page), registers a passkey and
 * signs in with it. WebAuthn refuses an IP address as the relying party's ID, so on a printed
 * http://127.0.0.1:<port> the registration fails ("This is an invalid domain").
 *
 * What derives from the printed URL is checked against it too: the OAuth issuer (discovery),
 * and the verification URL `secrets login` shows (RFC 8628). The server still listens on
 * loopback only (/proc/net/tcp{,6}).
 */
let child: ChildProcess | undefined;
let dataDir: string;
let port: number;
let printed: string;
let output = '';
const rootKey = generateApiKey().key;

/** The environment of a person's shell: none of the suite's own settings. */
function personEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(VITEST|PUBLIC_BASE_URL$|PKI_PUBLIC_BASE_URL$|NODE_ENV$|TEST_)/.test(k)) continue;
    env[k] = v;
  }
  return env;
}

beforeAll(async () => {
  requireChromium();
  [port] = [await freePort()];
  const dynamoPort = await freePort();
  dataDir = mkdtempSync(join(tmpdir(), 'secrets-api-npm-start-'));
  child = spawnGroup('npm', ['start'], {
    env: {
      ...personEnv(),
      PORT: String(port),
      DYNAMODB_PORT: String(dynamoPort),
      DYNAMODB_IN_MEMORY: '1',
      DATA_DIR: dataDir,
      SECRETS_DEV_ROOT_KEY: rootKey,
      NODE_NO_WARNINGS: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  printed = await new Promise<string>((ok, fail) => {
    const seen = (c: Buffer) => {
      output += c.toString();
      const m = /listening on (\S+)/.exec(output);
      if (m) ok(m[1]!);
    };
    child!.stdout!.on('data', seen);
    child!.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    child!.once('exit', (code) => fail(new Error(`npm start exited (code ${code}) before listening:\n${output.slice(-3000)}`)));
  });
}, scaled(300_000));

afterAll(async () => {
  if (child?.pid !== undefined) {
    // Ctrl-C in the terminal: SIGINT to the whole foreground group (npm, tsx, the runtime, what it started)
    const exited = child.exitCode !== null ? Promise.resolve() : new Promise((ok) => child!.once('exit', ok));
    try {
      process.kill(-child.pid, 'SIGINT');
    } catch {
      // the group is gone already
    }
    await Promise.race([exited, new Promise((ok) => setTimeout(ok, scaled(30_000)).unref())]);
    for (const end = Date.now() + scaled(15_000); Date.now() < end && groupMembers(child.pid).length > 0; ) await new Promise((r) => setTimeout(r, 250));
    const left = groupMembers(child.pid);
    await stopGroup(child, 1000);
    expect(left, 'processes of `npm start` left running after Ctrl-C').toEqual([]);
  }
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function call(method: string, path: string, body?: unknown, key?: string) {
  const res = await fetch(`${printed}${path}`, {
    method,
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, text, json: JSON.parse(text) as any };
}

/** The local addresses of the TCP sockets listening on `port` (/proc/net/tcp and tcp6, Linux). */
function listeners(p: number): string[] {
  const hex = p.toString(16).toUpperCase().padStart(4, '0');
  const out: string[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (!local || state !== '0A') continue; // 0A: LISTEN
      const [addr, portHex] = local.split(':');
      if (portHex === hex) out.push(addr!);
    }
  }
  return out;
}
// 127.0.0.1 (little-endian hex), ::1, or ::ffff:127.x in /proc's notation
const LOOPBACK = /^(0100007F|[0-9A-F]{6}7F|00000000000000000000000001000000|0000000000000000FFFF0000[0-9A-F]{6}7F)$/;

describe('`npm start` prints a URL where passkeys work (issue 33)', () => {
  it('prints http://localhost:<port>, listens on loopback only, and names the printed URL as its issuer and sign-in URL', async () => {
    expect(printed, `the URL \`npm start\` printed (its output: ${output.slice(-1500)})`).toBe(`http://localhost:${port}`);
    const bound = listeners(port);
    expect(bound.length, `sockets listening on port ${port}`).toBeGreaterThan(0);
    for (const addr of bound) expect(addr, `a socket on port ${port} listens beyond loopback`).toMatch(LOOPBACK);

    const discovery = await call('GET', '/api/v1/auth/oauth/.well-known/openid-configuration');
    expect(discovery.status, discovery.text).toBe(200);
    expect(discovery.json.issuer).toBe(`${printed}/api/v1/auth/oauth`);
    // what `secrets login` shows the person: the sign-in page under the printed URL
    const device = await call('GET', '/api/v1/auth/cli/login');
    expect(device.status, device.text).toBe(200);
    expect(device.json.verification_uri).toBe(`${printed}/api/v1/auth/oidc/login`);
  });

  it('a new admin sets a password, registers a passkey and signs in with it, on the printed URL (headless Chromium, virtual authenticator)', async () => {
    const account = await call('POST', '/api/v1/admin/tenants', { name: 'npm-start', admin_email: 'alice@example.test' }, rootKey);
    expect(account.status, account.text).toBe(201);
    const tenantId = account.json.data.tenant.id as string;
    const reset = await call('POST', '/api/v1/admin/users/reset-password', { tenant_id: tenantId, email: 'alice@example.test' }, rootKey);
    expect(reset.status, reset.text).toBe(200);

    let browser: Browser | undefined;
    try {
      browser = await launchChromium();
      const context = await browser.newContext();
      const page = await context.newPage();
      const cdp = await context.newCDPSession(page);
      await cdp.send('WebAuthn.enable', { enableUI: false });
      const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
      });
      const open = async () => {
        await page.goto(`${printed}/api/v1/auth/oidc/login`);
        await page.waitForSelector('body[data-state="ready"]');
        await page.fill('#account', tenantId);
      };
      const outcome = async (button: string): Promise<[string, string]> => {
        const before = await page.getAttribute('body', 'data-state');
        await page.click(button);
        await page.waitForFunction((s) => document.body.dataset.state !== s, before, { timeout: scaled(30_000) });
        return [(await page.getAttribute('body', 'data-state'))!, (await page.textContent('#status'))!];
      };

      await open();
      await page.fill('#email', 'alice@example.test');
      await page.fill('#password', 'npm start passkey walk 1');
      await page.fill('#reset_token', reset.json.data.reset_token as string);
      const [signedIn, signInStatus] = await outcome('#password-set');
      expect(signedIn, signInStatus).toBe('signed-in');

      await page.fill('#name', 'laptop');
      const [registered, registerStatus] = await outcome('#register');
      expect(registered, `registering a passkey on ${printed}: ${registerStatus}`).toBe('registered');
      const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
      expect(credentials).toHaveLength(1);
      expect(credentials[0]!.rpId).toBe('localhost');

      await open();
      const [passkey, passkeyStatus] = await outcome('#passkey');
      expect(passkey, `signing in with the passkey on ${printed}: ${passkeyStatus}`).toBe('signed-in');
      expect(passkeyStatus).toContain('alice@example.test');
      const session = JSON.parse((await page.evaluate(() => sessionStorage.getItem('session')))!) as { access_token: string };
      const me = await call('GET', '/api/v1/webauthn/credentials', undefined, session.access_token);
      expect(me.status, me.text).toBe(200);
      expect(me.json.data.credentials).toEqual([expect.objectContaining({ name: 'laptop', user: 'alice@example.test' })]);
      expect(me.json.data.credentials[0].last_used_at).not.toBeNull();
    } finally {
      await browser?.close();
    }
  });
});

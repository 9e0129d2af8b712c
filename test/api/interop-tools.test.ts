import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { base32 } from '@scure/base';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api, canary, newAccount, unique, type TestAccount } from '../helpers/api.js';
import { findLeaks } from '../helpers/leaks.js';

/**
 * Exported artifacts used by the reference command-line tools (provisioned by .ci/run like
 * SoftHSM2; a tool that is missing skips its test and says so): oathtool computes the same
 * one-time passwords as the service, the age CLI encrypts to an exported recipient and
 * decrypts with the exported identity, and `wg pubkey` derives the exported public key.
 * (openssl, ssh-keygen, gpg, keytool and minisign are driven by the key, certificate and
 * credential tests.)
 */
const has = (tool: string, args: string[]) => spawnSync(tool, args, { stdio: 'ignore' }).error === undefined;
const TOOLS = { oathtool: has('oathtool', ['--version']), age: has('age', ['--version']), wg: has('wg', ['--version']) };

let a: TestAccount;
let dir: string;
const exported: string[] = [];

beforeAll(async () => {
  a = await newAccount('interop-tools');
  dir = mkdtempSync(join(tmpdir(), 'interop-tools-'));
  for (const [tool, found] of Object.entries(TOOLS))
    if (!found) process.stderr.write(`interop-tools: ${tool} is not installed; its test is skipped\n`);
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  const leaks = await findLeaks({ dynamoEndpoint: inject('dynamoEndpoint'), tableName: inject('tableName'), logText: '', extra: exported });
  expect(leaks).toEqual([]);
});

const run = (cmd: string, args: string[], input?: string | Buffer) =>
  execFileSync(cmd, args, { input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
const file = (name: string, content: string | Buffer) => {
  const p = join(dir, `${unique('f')}-${name}`);
  writeFileSync(p, content, { mode: 0o600 });
  return p;
};

describe('TOTP codes agree with oathtool', () => {
  it.skipIf(!TOOLS.oathtool)('for each algorithm, digits and period, at several instants, the generated code is oathtool’s', async () => {
    const key = await a.key(['credentials:read', 'credentials:write']);
    for (const [algorithm, digits, period] of [
      ['SHA1', 6, 30],
      ['SHA256', 8, 60],
      ['SHA512', 7, 30],
    ] as const) {
      const secret = base32.encode(randomBytes(20)).replace(/=+$/, '');
      exported.push(secret);
      const made = await api('POST', '/api/v1/totp-tokens', {
        key,
        body: { name: unique('otp'), account: 'alice', secret, algorithm, digits, period },
      });
      expect(made.status, made.text).toBe(201);
      for (const at of [0, 1_111_111_109, 1_700_000_017, Math.floor(Date.now() / 1000)]) {
        const res = await api('POST', `/api/v1/totp-tokens/${made.body.data.totp_token.id}/generate`, { key, body: { at } });
        expect(res.status, res.text).toBe(200);
        const now = new Date(at * 1000)
          .toISOString()
          .replace('T', ' ')
          .replace(/\.\d+Z$/, ' UTC');
        const oath = run('oathtool', [`--totp=${algorithm}`, `--digits=${digits}`, `--time-step-size=${period}s`, '--now', now, '-b', secret]).trim();
        expect(res.body.data.code, `${algorithm}/${digits}/${period} at ${at}`).toBe(oath);
      }
    }
  });
});

describe('age keys with the age CLI', () => {
  it.skipIf(!TOOLS.age)('age -r <exported recipient> encrypts; age -d -i <exported identity> decrypts', async () => {
    const writer = await a.key(['credentials:write', 'export:read']);
    const gen = await api('POST', '/api/v1/keys/age/generate', { key: writer, body: { name: unique('age') } });
    expect(gen.status, gen.text).toBe(201);
    const { id, recipient } = gen.body.data.key as { id: string; recipient: string };
    const full = await api('GET', `/api/v1/keys/age/${id}?include_private=true`, { key: writer });
    const identity = full.body.data.key.private.identity as string;
    exported.push(identity);
    const message = canary('age-cli');
    const encrypted = file('msg.age', execFileSync('age', ['-r', recipient], { input: message }));
    expect(run('age', ['-d', '-i', file('identity.txt', `${identity}\n`), encrypted])).toBe(message);
    // and the CLI derives the same recipient from the identity
    expect(run('age-keygen', ['-y', file('id2.txt', `${identity}\n`)]).trim()).toBe(recipient);
  });
});

describe('WireGuard keys with wg', () => {
  it.skipIf(!TOOLS.wg)('wg pubkey derives the exported public key from the exported private key', async () => {
    const writer = await a.key(['credentials:write', 'export:read']);
    const gen = await api('POST', '/api/v1/keys/wireguard/generate', { key: writer, body: { name: unique('wg') } });
    expect(gen.status, gen.text).toBe(201);
    const full = await api('GET', `/api/v1/keys/wireguard/${gen.body.data.key.id}?include_private=true`, { key: writer });
    const priv = full.body.data.key.private.private_key as string;
    exported.push(priv);
    expect(run('wg', ['pubkey'], `${priv}\n`).trim()).toBe(gen.body.data.key.public_key);
  });
});

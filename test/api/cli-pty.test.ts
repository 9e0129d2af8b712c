import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { baseUrl, canary, newAccount, type TestAccount } from '../helpers/api.js';
import { scaled } from '../helpers/timeouts.js';
import { testDirectory } from '../helpers/scratch.js';

/**
 * A whole CLI session as a person has it: an interactive bash on a pseudo-terminal
 * (util-linux `script`, which gives its child a real terminal: the CLI sees isTTY, so the
 * API-key prompt turns the echo off), with the completion loaded, keys typed one line at a
 * time and Tab pressed to complete a command.
 */
const BIN = join(import.meta.dirname, '..', '..', 'bin', 'secrets.cjs');
let a: TestAccount;

beforeAll(async () => {
  a = await newAccount('cli-pty');
});

describe('secrets CLI on a terminal', () => {
  it('login with a hidden API key prompt, set, get through Tab completion, run, logout', async () => {
    const home = testDirectory('cli-pty-');
    const bin = join(home, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'secrets'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
    chmodSync(join(bin, 'secrets'), 0o755);
    const shell = spawn('script', ['-qfec', 'bash --norc --noprofile -i', '/dev/null'], {
      env: {
        PATH: `${bin}:${process.env.PATH}`,
        HOME: home,
        XDG_CONFIG_HOME: join(home, 'config'),
        SECRETS_API_URL: baseUrl(),
        TERM: 'dumb',
        PS1: '$ ',
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let screen = '';
    shell.stdout.on('data', (d) => (screen += d));
    shell.stderr.on('data', (d) => (screen += d));
    const exited = new Promise<number | null>((resolve) => shell.on('close', resolve));
    let from = 0;
    /** Waits until `text` appears on the screen after what was already seen. */
    const see = async (text: string | RegExp, timeoutMs = 30_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const rest = screen.slice(from);
        const i = typeof text === 'string' ? rest.indexOf(text) : rest.search(text);
        if (i >= 0) {
          from += i + 1;
          return;
        }
        if (Date.now() > deadline) throw new Error(`not seen on the terminal: ${text}\n--- screen ---\n${screen}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const type = (keys: string) => shell.stdin.write(keys);
    const value = canary('pty');
    try {
      await see('$ ');
      type('source <(secrets completion bash)\r');
      await see('$ ');
      type('secrets login --method api-key\r');
      await see('API key: ');
      type(`${a.adminKey}\r`);
      await see('Logged in with an API key (profile default)');
      type(`secrets secrets set greeting ${value}\r`);
      await see('Created greeting (version 1)');
      // Tab completes "ge" to "get"
      type('secrets secrets ge\t');
      await see('secrets secrets get ');
      type('greeting --field value\r');
      await see(`${value}\r\n`);
      type('secrets run --all -- printenv GREETING\r');
      await see(`${value}\r\n`);
      type('secrets logout\r');
      await see('Logged out: the API key is forgotten here');
      type('exit\r');
      expect(await exited).toBe(0);
    } finally {
      shell.kill();
    }
    // the key was typed with the echo off: it never reached the screen
    expect(screen).not.toContain(a.adminKey);
    expect(screen).not.toContain(a.adminKey.slice(13, 30));
  }, scaled(120_000));
});

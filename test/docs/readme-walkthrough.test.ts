import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { baseUrl, canary, rootKey } from '../helpers/api.js';
import { launchChromium, requireChromium } from '../helpers/browser.js';
import { testDirectory } from '../helpers/scratch.js';

/**
 * README.md, "A new account admin: from account creation to `secrets login`", followed as
 * written: the section's fenced commands run in bash, in order, against the suite's runtime
 * (what `npm start` serves), and its numbered steps on the sign-in page are done in headless
 * Chromium by the labels and button names the README gives in bold. If a step does not work
 * as the README says, this fails naming the step.
 *
 * What the test cannot do literally, and does instead:
 * - `SECRETS_DEV_ROOT_KEY=$ROOT npm start &`: the suite's runtime is that server; $ROOT is
 *   its root key, and `localhost:3000` its port.
 * - `npm i -g .`: `secrets` on PATH runs bin/secrets.cjs, the file package.json's `bin` installs.
 * - `export NAME=...  # a.b.c`: NAME takes a.b.c of the JSON the previous command printed.
 * - a command commented `# prints X` must print exactly X.
 */
const README = resolve('README.md');
const BIN = resolve('bin/secrets.cjs');
const SECTION_START = '### A new account admin';

interface Walk {
  readonly blocks: string[][];
  /** The numbered steps between the blocks, as prose. */
  readonly steps: string[];
}

/** The section's fenced `sh` blocks as commands (continuations joined) and the prose steps between them. */
function walkthrough(): Walk {
  const text = readFileSync(README, 'utf8');
  const start = text.indexOf(SECTION_START);
  if (start < 0) throw new Error(`README.md has no section "${SECTION_START}"`);
  const end = text.slice(start + 1).search(/\n###? /) + start + 1; // the next ## or ### heading (a code block's # comments are not one)
  const section = text.slice(start, end > start ? end : undefined);
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) =>
    m[1]!
      .replace(/\\\n\s*/g, '')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#')),
  );
  const steps = [...section.matchAll(/^\d+\. ([\s\S]*?)(?=^\d+\. |^```|(?![\s\S]))/gm)].map((m) => m[1]!.replace(/\s+/g, ' ').trim());
  return { blocks, steps };
}

const pathOf = (json: unknown, path: string) => path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], json);
const comment = (line: string) => /\s#\s(.*)$/.exec(line)?.[1]?.trim();
const withoutComment = (line: string) => line.replace(/\s+#\s.*$/, '');

describe('README walk-through: a new account admin, from account creation to an approved `secrets login`', () => {
  it('runs as written: the account, the first password on the sign-in page (SRP in Chromium), the approval, and the CLI acting as the admin', async () => {
    requireChromium();
    const { blocks, steps } = walkthrough();
    expect(blocks.length, 'the section has its command blocks').toBeGreaterThanOrEqual(2);
    const port = new URL(baseUrl()).port;
    const home = testDirectory('readme-walk-');
    const binDir = join(home, 'bin');
    const shim = join(binDir, 'secrets');
    await promisify(execFile)('mkdir', ['-p', binDir]);
    writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
    chmodSync(shim, 0o755);
    const env: NodeJS.ProcessEnv = {
      PATH: `${binDir}:${process.env.PATH}`,
      HOME: home,
      XDG_CONFIG_HOME: join(home, 'config'),
      NO_COLOR: '1',
    };
    const local = (line: string) => line.replaceAll('localhost:3000', `localhost:${port}`);
    const bash = async (line: string) => {
      try {
        return await promisify(execFile)('bash', ['-c', local(line)], { env, timeout: 120_000 });
      } catch (error) {
        const e = error as { stdout?: string; stderr?: string; code?: number };
        throw new Error(`README command failed (exit ${e.code}): ${line}\n${e.stderr ?? ''}${e.stdout ?? ''}`);
      }
    };

    let last = '';
    let login: { child: ChildProcess; done: Promise<{ code: number | null; stdout: string; stderr: string }>; url: Promise<string> } | undefined;
    const password = canary('readme-password');
    const run = async (raw: string) => {
      const line = withoutComment(raw);
      if (/^SECRETS_DEV_ROOT_KEY=\$ROOT npm start &$/.test(line)) return; // the suite's runtime
      if (line === 'npm i -g .') return; // `secrets` on PATH: bin/secrets.cjs
      const exported = /^export (\w+)=(.*)$/.exec(line);
      if (exported) {
        const [, name, value] = exported;
        if (name === 'ROOT') {
          env.ROOT = rootKey();
          return;
        }
        if (value!.endsWith('...')) {
          const path = comment(raw)?.split(/\s/)[0];
          let json: unknown;
          try {
            json = JSON.parse(last);
          } catch {
            throw new Error(`README: \`${raw}\` takes a value from the answer above it, which is not JSON: ${last}`);
          }
          const v = pathOf(json, path ?? '');
          expect(typeof v, `README: \`${raw}\`: ${path} in ${last}`).toBe('string');
          expect(v as string, `README: \`${raw}\` expects a value like ${value}`).toMatch(new RegExp(`^${value!.replace('...', '')}`));
          env[name!] = v as string;
          return;
        }
        env[name!] = (await bash(`printf %s ${value}`)).stdout;
        return;
      }
      if (line === 'secrets login') {
        const child = spawn('bash', ['-c', local(line)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout!.on('data', (d) => (stdout += d));
        const url = new Promise<string>((res, rej) => {
          child.stderr!.on('data', (d) => {
            stderr += d;
            const m = /open (\S+)/.exec(stderr);
            if (m) res(m[1]!);
          });
          child.on('close', () => rej(new Error(`secrets login ended before printing a URL: ${stderr}`)));
        });
        const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((res) =>
          child.on('close', (code) => res({ code, stdout, stderr })),
        );
        login = { child, done, url };
        return;
      }
      const out = await bash(line);
      last = out.stdout;
      const expected = /^prints (\S+?):?(\s|$)/.exec(comment(raw) ?? '')?.[1];
      if (expected) expect(out.stdout.trim(), `README: \`${raw}\``).toBe(expected);
    };

    try {
      for (const line of blocks[0]!) await run(line);
      expect(login, 'the first block ends with `secrets login`').toBeDefined();
      const url = await login!.url;
      expect(new URL(url).port, `the URL \`secrets login\` prints (${url}) is the server's`).toBe(port);
      const cliCode = new URL(url).searchParams.get('user_code');

      // the numbered steps, on the sign-in page, by the README's own words
      const browser = await launchChromium();
      try {
        const page = await browser.newPage();
        await page.goto(url);
        await page.waitForSelector('body[data-state="ready"]');
        expect(steps.length, 'the section has its numbered steps on the page').toBeGreaterThanOrEqual(2);
        for (const step of steps) {
          for (const m of step.matchAll(/\*\*([^*]+)\*\* with `([^`]+)`/g)) {
            const value = (await bash(`printf %s "${m[2]}"`)).stdout;
            await page.getByLabel(m[1]!, { exact: true }).fill(value);
          }
          const own = /a \*\*([^*]+)\*\* of your choice/.exec(step);
          if (own) await page.getByLabel(own[1]!, { exact: true }).fill(password);
          const compare = /the \*\*([^*]+)\*\* on the page is the one your terminal shows/.exec(step);
          if (compare) expect(await page.getByLabel(compare[1]!, { exact: true }).inputValue(), `README step: ${step}`).toBe(cliCode);
          for (const m of step.matchAll(/click \*\*([^*]+)\*\*/g)) {
            const before = await page.getAttribute('body', 'data-state');
            await page.getByRole('button', { name: m[1]!, exact: true }).click();
            await page.waitForFunction((s) => document.body.dataset.state !== s, before, { timeout: 60_000 });
            const state = await page.getAttribute('body', 'data-state');
            expect(state, `README step "${step}": after **${m[1]}** the page says: ${await page.textContent('#status')}`).not.toBe('failed');
          }
        }
        expect(await page.getAttribute('body', 'data-state'), (await page.textContent('#status')) ?? '').toBe('cli-approved');
      } finally {
        await browser.close();
      }
      const logged = await login!.done;
      expect(logged.code, `secrets login: ${logged.stderr}`).toBe(0);
      const printed = /The terminal prints `([^`…]+)/.exec(steps.join(' '))?.[1];
      expect(logged.stdout.startsWith(printed ?? '-'), `README: "The terminal prints ${printed}…"; it printed: ${logged.stdout}`).toBe(true);

      for (const block of blocks.slice(1)) for (const line of block) await run(line);
    } finally {
      if (login && login.child.exitCode === null) login.child.kill();
    }
  });
});

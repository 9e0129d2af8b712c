import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it, onTestFinished } from 'vitest';
import { configDir, credentialsPath, readLogin, removeLogin, writeLogin } from '../../cli/config.js';
import { CLI_BUNDLE, cliBuildOptions } from '../../scripts/cli-build.js';

describe('bin/secrets.cjs', () => {
  it('is what cli/ builds to (run `npm run cli:build`), and bundles nothing of the server', async () => {
    const out = await build({ ...cliBuildOptions(), write: false, outfile: CLI_BUNDLE, metafile: true });
    const fresh = out.outputFiles[0]!.text;
    expect(readFileSync(CLI_BUNDLE, 'utf8') === fresh, 'bin/secrets.cjs is out of date: run `npm run cli:build`').toBe(true);
    expect(statSync(CLI_BUNDLE).mode & 0o111).not.toBe(0);
    const inputs = Object.keys(out.metafile!.inputs);
    expect(inputs.filter((f) => /^(lib|functions|infra)\//.test(f))).toEqual([]);
    expect(inputs.filter((f) => f.includes('@aws-sdk'))).toEqual([]);
    // of package.json, the version only: not the project's scripts and dependencies
    const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    expect(fresh).toContain(JSON.stringify(manifest.version));
    for (const field of ['devDependencies', 'cli:build', 'typescript-go']) expect(fresh, field).not.toContain(field);
  });
});

describe('cli/config.ts', () => {
  it('the OS configuration directory of each platform', () => {
    expect(configDir({ XDG_CONFIG_HOME: '/x/cfg' }, 'linux')).toBe('/x/cfg/secrets-cli');
    expect(configDir({}, 'linux')).toBe(join(homedir(), '.config', 'secrets-cli'));
    expect(configDir({}, 'darwin')).toBe(join(homedir(), 'Library', 'Application Support', 'secrets-cli'));
    expect(configDir({ APPDATA: 'C:\\Users\\u\\AppData\\Roaming' }, 'win32')).toBe(join('C:\\Users\\u\\AppData\\Roaming', 'secrets-cli'));
    expect(configDir({}, 'win32')).toBe(join(homedir(), 'AppData', 'Roaming', 'secrets-cli'));
  });

  it('writes 0600 in a 0700 folder; reads back; a damaged or foreign file reads as no login', () => {
    const home = mkdtempSync(join(tmpdir(), 'cli-config-'));
    onTestFinished(() => rmSync(home, { recursive: true, force: true }));
    const dir = join(home, 'secrets-cli');
    expect(readLogin(dir)).toBeUndefined();
    const login = { api_url: 'http://x', access_token: 'a', access_expires_at: 1, refresh_token: 'scr_x', session_id: 's', scope: 'admin:*' };
    writeLogin(login, dir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(credentialsPath(dir)).mode & 0o777).toBe(0o600);
    expect(readLogin(dir)).toEqual(login);
    writeFileSync(credentialsPath(dir), '{not json');
    expect(readLogin(dir)).toBeUndefined();
    writeFileSync(credentialsPath(dir), '{"api_url":"http://x"}');
    expect(readLogin(dir)).toBeUndefined();
    removeLogin(dir);
    removeLogin(dir);
    expect(readLogin(dir)).toBeUndefined();
  });
});

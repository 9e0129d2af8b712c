import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as srp from 'secure-remote-password/client.js';
import { parse as parseYaml } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, baseUrl, canary, newAccount, rootKey, type TestAccount, unique } from '../helpers/api.js';
import { admitted } from './sign-in.helpers.js';
import { scaled } from '../helpers/timeouts.js';
import { testDirectory } from '../helpers/scratch.js';

/**
 * Every command of the CLI (issue 36), run as a child process (the shipped bundle,
 * bin/secrets.cjs) against the local gateway with an API key: output formats, fields,
 * versions, patch, import, run/export over a container, tag or all, typed credentials,
 * profiles, the three sign-in methods, completion, and the mistakes answered with the fix.
 */
const BIN = join(import.meta.dirname, '..', '..', 'bin', 'secrets.cjs');
let a: TestAccount;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: NodeJS.ProcessEnv, stdin?: string, cwd?: string): Promise<Run> {
  const child = spawn(process.execPath, [BIN, ...args], { env, cwd, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  child.stdin.end(stdin ?? '');
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** A fresh config folder; the API key in the environment unless `key` is null. */
const envOf = (key: string | null = a.adminKey, more: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => {
  const home = testDirectory('cli-cmd-');
  return {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: join(home, 'config'),
    SECRETS_API_URL: baseUrl(),
    ...(key ? { SECRETS_API_KEY: key } : {}),
    ...more,
  };
};

const ok = async (args: string[], env: NodeJS.ProcessEnv, stdin?: string, cwd?: string) => {
  const r = await cli(args, env, stdin, cwd);
  expect(r.code, `secrets ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r;
};
const fails = async (args: string[], env: NodeJS.ProcessEnv, stdin?: string, cwd?: string) => {
  const r = await cli(args, env, stdin, cwd);
  expect(r.code, `secrets ${args.join(' ')} should fail: ${r.stdout}`).toBe(1);
  expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
  return r.stderr.trim();
};

async function newContainer(name: string): Promise<string> {
  const res = await api('POST', '/api/v1/containers', { key: a.adminKey, body: { name } });
  expect(res.status, res.text).toBe(201);
  return res.body.data.container.id;
}

beforeAll(async () => {
  a = await newAccount('cli-cmd');
});

describe('secrets CLI commands', () => {
  it('get --field and --version, versions, rollback, patch, and every --output format', async () => {
    const env = envOf();
    const name = unique('db');
    const [p1, p2] = [canary('p1'), canary('p2')];
    await ok(['secrets', 'set', name, '--data', JSON.stringify({ user: 'app', password: p1 })], env);
    expect((await ok(['secrets', 'get', name, '--field', 'password'], env)).stdout).toBe(`${p1}\n`);
    expect(await fails(['secrets', 'get', name, '--field', 'pasword'], env)).toBe('error: no field "pasword": the fields are user, password');

    // patch merges: user stays, password changes (vault kv patch)
    const patched = await ok(['secrets', 'patch', name, `password=${p2}`], env);
    expect(patched.stdout.trim()).toBe(`Patched ${name}: password (version 2)`);
    expect(patched.stdout).not.toContain(p2);
    expect(JSON.parse((await ok(['secrets', 'get', name, '-o', 'json'], env)).stdout)).toMatchObject({ data: { user: 'app', password: p2 }, version: 2 });
    expect(await fails(['secrets', 'patch', name, 'novalue'], env)).toMatch(/^error: "novalue" is not FIELD=VALUE/);

    // versions and an older one, by --version; rollback writes it again as a new version
    const versions = JSON.parse((await ok(['secrets', 'versions', name, '--output', 'json'], env)).stdout);
    expect(versions.map((v: { version: number; current: boolean }) => [v.version, v.current])).toEqual([
      [2, true],
      [1, false],
    ]);
    expect((await ok(['secrets', 'versions', name, '-o', 'table'], env)).stdout.split('\n')[0]).toMatch(/^VERSION\s+CURRENT\s+CREATED_AT\s+CREATED_BY$/);
    expect((await ok(['secrets', 'get', name, '--version', '1', '--field', 'password'], env)).stdout).toBe(`${p1}\n`);
    expect(await fails(['secrets', 'get', name, '--version', 'two'], env)).toBe('error: --version must be a positive whole number, not "two"');
    const rolled = await ok(['secrets', 'rollback', name, '--version', '1'], env);
    expect(rolled.stdout.trim()).toBe(`Rolled back ${name} to version 1 (now version 3)`);
    expect((await ok(['secrets', 'get', name, '--field', 'password'], env)).stdout).toBe(`${p1}\n`);

    // the output formats, global before or after the command
    const yaml = parseYaml((await ok(['-o', 'yaml', 'secrets', 'get', name], env)).stdout);
    expect(yaml).toMatchObject({ name, version: 3, data: { user: 'app', password: p1 } });
    expect((await ok(['secrets', 'get', name, '-o', 'env'], env)).stdout).toBe(`USER="app"\nPASSWORD="${p1}"\n`);
    const tableOut = (await ok(['secrets', 'list', '-o', 'table'], env)).stdout.split('\n');
    expect(tableOut[0]).toMatch(/^NAME\s+VERSION\s+TAGS\s+UPDATED_AT\s+ID$/);
    expect(tableOut.some((l) => l.startsWith(`${name} `))).toBe(true);
    expect(await fails(['secrets', 'list', '-o', 'xml'], env)).toMatch(/^error: option '-o, --output <format>' argument 'xml' is invalid/);
    // --query (JMESPath, as aws --query) picks from the data; JSON unless --output names a format
    expect(JSON.parse((await ok(['secrets', 'list', '--query', `[?name=='${name}'].version | [0]`], env)).stdout)).toBe(3);
    expect((await ok(['--query', `[?name=='${name}'].name`, 'secrets', 'list', '-o', 'yaml'], env)).stdout).toBe(`- ${name}\n`);
    expect(JSON.parse((await ok(['secrets', 'get', name, '--query', 'data.user'], env)).stdout)).toBe('app');
    expect(await fails(['secrets', 'list', '--query', '[?name=='], env)).toMatch(/^error: --query "\[\?name==" is not a JMESPath expression the result can answer: /);
  }, scaled(60_000));

  it('run and export over a container, a tag or every secret; same-named variables are refused by name', async () => {
    const env = envOf();
    const box = unique('box');
    const boxId = await newContainer(box);
    const tag = unique('tag');
    const [v1, v2, v3] = [canary('c1'), canary('c2'), canary('c3')];
    const inBox = unique('in-box');
    const tagged = unique('tagged');
    for (const [body, expected] of [
      [{ name: inBox, data: { value: v1 }, container_id: boxId }, 201],
      [{ name: tagged, data: { user: 'u', password: v2 }, tags: [tag] }, 201],
    ] as const)
      expect((await api('POST', '/api/v1/secrets', { key: a.adminKey, body })).status).toBe(expected);
    const boxVar = inBox.toUpperCase().replace(/-/g, '_');
    const tagVar = tagged.toUpperCase().replace(/-/g, '_');

    const byContainer = JSON.parse((await ok(['export', '--container', box, '--format', 'json'], env)).stdout);
    expect(byContainer).toEqual({ [boxVar]: v1 });
    expect(JSON.parse((await ok(['export', '--container', boxId, '-o', 'json'], env)).stdout)).toEqual({ [boxVar]: v1 });
    const byTag = parseYaml((await ok(['export', '--tag', tag, '--format', 'yaml'], env)).stdout);
    expect(byTag).toEqual({ [`${tagVar}_USER`]: 'u', [`${tagVar}_PASSWORD`]: v2 });
    expect((await ok(['export', '--tag', tag, '--format', 'docker'], env)).stdout).toBe(`${tagVar}_USER=u\n${tagVar}_PASSWORD=${v2}\n`);
    expect(await fails(['export', '--container', 'no-such-box'], env)).toMatch(/^error: no container "no-such-box": the containers are /);

    const run = await ok(['run', '--container', box, '--tag', tag, '--', 'sh', '-c', `echo "$${boxVar}"`], env);
    expect(run.stdout).toBe('\n'); // container AND tag: no secret is in both
    const runAll = await ok(['run', '--all', '--', 'sh', '-c', `test "$${boxVar}" = "$0" && test "$${tagVar}_PASSWORD" = "$1" && echo ok`, v1, v2], env);
    expect(runAll.stdout).toBe('ok\n');
    expect(runAll.stderr).not.toContain(v1);

    // two secrets that name the same variable: refused, both named
    const dash = unique('clash');
    const dot = dash.replace('-', '.');
    await ok(['secrets', 'set', dash, v3], env);
    await ok(['secrets', 'set', dot, v3], env);
    const clash = await fails(['run', '-s', dash, '-s', dot, '--', 'true'], env);
    expect(clash).toBe(
      `error: ${dash.toUpperCase().replace(/-/g, '_')} would come from both secret "${dash}" and secret "${dot}": choose a name for one of them with -s NAME=OTHER_VAR`,
    );
    expect(clash).not.toContain(v3);
    expect(JSON.parse((await ok(['export', '-s', dash, '-s', `${dot}=OTHER`, '--format', 'json'], env)).stdout)).toEqual({
      [dash.toUpperCase().replace(/-/g, '_')]: v3,
      OTHER: v3,
    });
    expect(await fails(['export', '--all'], env)).toMatch(/would come from both/);
  }, scaled(60_000));

  it('secrets import from dotenv, JSON and YAML; --dry-run changes nothing; bad entries are refused before any write', async () => {
    const env = envOf();
    const dir = testDirectory('cli-import-');
    const [n1, n2, n3] = [unique('IMP_A'), unique('imp-b'), unique('imp-c')];
    const v = canary('imp');
    writeFileSync(join(dir, 'app.env'), `# comment\n${n1}=${v}\nexport ${n2}="two words"\n`);
    const dry = await ok(['secrets', 'import', join(dir, 'app.env'), '--dry-run'], env);
    expect(dry.stdout).toBe(`would create ${n1} (value)\nwould create ${n2} (value)\n(dry run: nothing changed)\n`);
    await fails(['secrets', 'get', n1], env);

    const done = JSON.parse((await ok(['secrets', 'import', join(dir, 'app.env'), '-o', 'json'], env)).stdout);
    expect(done).toEqual({
      dry_run: false,
      secrets: [
        { name: n1, action: 'create', fields: ['value'] },
        { name: n2, action: 'create', fields: ['value'] },
      ],
    });
    expect((await ok(['secrets', 'get', n1], env)).stdout).toBe(`${v}\n`);
    expect((await ok(['secrets', 'get', n2], env)).stdout).toBe('two words\n');

    writeFileSync(join(dir, 'more.yaml'), `${n2}: changed\n${n3}:\n  user: app\n  port: 5432\n`);
    const yaml = await ok(['secrets', 'import', join(dir, 'more.yaml')], env);
    expect(yaml.stdout).toBe(`updated ${n2} (value)\ncreated ${n3} (user, port)\n`);
    expect(JSON.parse((await ok(['secrets', 'get', n3], env)).stdout)).toEqual({ user: 'app', port: '5432' });

    const fromStdin = await ok(['secrets', 'import', '-', '--format', 'json', '--dry-run'], env, JSON.stringify({ [n3]: { user: 'x' } }));
    expect(fromStdin.stdout).toContain(`would update ${n3} (user)`);
    const bad = await fails(['secrets', 'import', '-', '--format', 'json'], env, JSON.stringify({ [unique('ok')]: 'x', 'bad/name': 'y', list: [1] }));
    expect(bad).toBe(
      'error: nothing imported: "bad/name" is not a secret name (letters, digits, ".", "_", "-", starting with a letter or digit); "list" must be a string or an object of strings',
    );
    expect(await fails(['secrets', 'import', join(dir, 'missing.env')], env)).toBe(`error: cannot read ${join(dir, 'missing.env')}: check the path`);
  }, scaled(60_000));

  it('typed credentials: types, list and get by collection, by id or name, with --field', async () => {
    const env = envOf();
    const name = unique('mail');
    const secret = canary('pw');
    const made = await api('POST', '/api/v1/passwords', { key: a.adminKey, body: { name, username: 'alice', password: secret } });
    expect(made.status, made.text).toBe(201);
    const id = made.body.data.password.id as string;
    expect((await ok(['credentials', 'types'], env)).stdout.split('\n')).toContain('wifi-credentials');
    const list = JSON.parse((await ok(['credentials', 'list', 'passwords', '--json'], env)).stdout) as { id: string; name: string }[];
    expect(list.find((i) => i.id === id)?.name).toBe(name);
    expect(JSON.stringify(list)).not.toContain(secret);
    expect((await ok(['credentials', 'get', 'passwords', name, '--field', 'password'], env)).stdout).toBe(`${secret}\n`);
    expect(JSON.parse((await ok(['credentials', 'get', 'passwords', id, '-o', 'json'], env)).stdout)).toMatchObject({ id, username: 'alice' });
    expect(await fails(['credentials', 'list', 'wifi'], env)).toMatch(/^error: no collection "wifi": use one of computer-credentials, /);
    expect(await fails(['credentials', 'get', 'passwords', 'nobody'], env)).toBe(
      'error: no item named "nobody" in passwords: `secrets credentials list passwords` shows them',
    );
  }, scaled(60_000));

  it('profiles in the config folder: set, use, SECRETS_PROFILE, --profile; login with an API key from stdin; logout', async () => {
    const env = envOf(null);
    const cfg = join(env.XDG_CONFIG_HOME!, 'secrets-cli');
    const noUrl = { ...env, SECRETS_API_URL: undefined };
    await ok(['profile', 'set', 'staging', '--api-url', baseUrl()], noUrl);
    expect(await fails(['--profile', 'staging', 'whoami'], noUrl)).toBe(
      'error: not logged in with profile staging: run `secrets --profile staging login` (or set SECRETS_API_KEY to an API key)',
    );
    const login = await ok(['--profile', 'staging', 'login', '--method', 'api-key'], noUrl, `${a.adminKey}\n`);
    expect(login.stdout.trim()).toBe(`Logged in with an API key (profile staging); stored in ${join(cfg, 'credentials.staging.json')}`);
    expect(statSync(join(cfg, 'credentials.staging.json')).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(join(cfg, 'config.json'), 'utf8'))).toEqual({ profiles: { staging: { api_url: baseUrl() } } });

    // the profile by flag, by SECRETS_PROFILE, and by `profile use`
    expect(JSON.parse((await ok(['whoami', '--profile', 'staging', '-o', 'json'], noUrl)).stdout)).toMatchObject({ account_id: a.tenantId, via: 'api_key' });
    expect(JSON.parse((await ok(['whoami', '--json'], { ...noUrl, SECRETS_PROFILE: 'staging' })).stdout)).toMatchObject({ account_id: a.tenantId });
    await fails(['whoami'], noUrl);
    expect((await ok(['profile', 'use', 'staging'], noUrl)).stdout.trim()).toBe('Using profile staging');
    expect((await ok(['whoami'], noUrl)).stdout).toContain(`in account ${a.tenantId}`);
    const profiles = JSON.parse((await ok(['profile', 'list', '-o', 'json'], noUrl)).stdout);
    expect(profiles).toEqual([
      { name: 'default', current: false, api_url: null, signed_in: false, scopes: [] },
      { name: 'staging', current: true, api_url: baseUrl(), signed_in: true, scopes: [] },
    ]);
    expect(await fails(['profile', 'use', 'nope'], noUrl)).toBe('error: no profile nope: create it with `secrets profile set nope --api-url <url>`');

    // a garbage key is refused before it is stored or sent
    expect(await fails(['--profile', 'other', 'login', '--method', 'api-key', '--api-url', baseUrl()], noUrl, 'Bearer oops\n')).toBe(
      'error: the API key given is not an API key (keys look like scm_xxxxxxxx_… in one piece): copy the whole key again, or use `secrets login` to sign in instead',
    );
    expect((await ok(['logout'], noUrl)).stdout.trim()).toBe('Logged out: the API key is forgotten here (it stays valid until revoked).');
    await fails(['whoami'], noUrl);
  }, scaled(60_000));

  it('a profile scoped to a folder (doppler setup): used there and below, not elsewhere; --profile and SECRETS_PROFILE still win; unscope', async () => {
    const env = envOf(null);
    const noUrl = { ...env, SECRETS_API_URL: undefined };
    await ok(['profile', 'set', 'proj', '--api-url', baseUrl()], noUrl);
    await ok(['--profile', 'proj', 'login', '--method', 'api-key'], noUrl, `${a.adminKey}\n`);
    const project = realpathSync(testDirectory('cli-project-'));
    const below = join(project, 'src');
    mkdirSync(below);
    const elsewhere = testDirectory('cli-elsewhere-');
    const notLoggedIn = 'error: not logged in: run `secrets login` (or set SECRETS_API_KEY to an API key)';

    expect((await ok(['profile', 'use', 'proj', '--scope', '.'], noUrl, undefined, project)).stdout.trim()).toBe(`Using profile proj in ${project} and below`);
    expect(JSON.parse(readFileSync(join(env.XDG_CONFIG_HOME!, 'secrets-cli', 'config.json'), 'utf8')).scopes).toEqual({ [project]: 'proj' });
    // in the folder and below it: the scoped profile's credential; elsewhere the global choice (default, not logged in)
    expect(JSON.parse((await ok(['whoami', '--json'], noUrl, undefined, project)).stdout)).toMatchObject({ account_id: a.tenantId });
    expect(JSON.parse((await ok(['whoami', '--json'], noUrl, undefined, below)).stdout)).toMatchObject({ account_id: a.tenantId });
    expect(await fails(['whoami'], noUrl, undefined, elsewhere)).toBe(notLoggedIn);
    // --profile and SECRETS_PROFILE win over the folder's
    expect(await fails(['--profile', 'default', 'whoami'], noUrl, undefined, below)).toBe(notLoggedIn);
    expect(await fails(['whoami'], { ...noUrl, SECRETS_PROFILE: 'default' }, undefined, below)).toBe(notLoggedIn);
    const listed = JSON.parse((await ok(['profile', 'list', '-o', 'json'], noUrl, undefined, below)).stdout);
    expect(listed).toContainEqual({ name: 'proj', current: true, api_url: baseUrl(), signed_in: true, scopes: [project] });

    expect(await fails(['profile', 'use', 'proj', '--scope', join(project, 'nope')], noUrl)).toBe(
      `error: --scope "${join(project, 'nope')}" is not a directory: name the project's folder (\`.\` is the current one)`,
    );
    expect(await fails(['profile', 'unscope'], noUrl, undefined, below)).toBe(
      `error: no profile is scoped to ${below}: ${project} is (profile proj); \`secrets profile unscope ${project}\``,
    );
    expect((await ok(['profile', 'unscope', project], noUrl)).stdout.trim()).toBe(`Profile proj is no longer used in ${project}`);
    expect(await fails(['whoami'], noUrl, undefined, below)).toBe(notLoggedIn);
  }, scaled(60_000));

  it('login with a password (SRP-6a, as the sign-in page does it), then a session like the device login', async () => {
    const account = await newAccount('cli-srp');
    const password = canary('pw');
    const reset = await api('POST', '/api/v1/admin/users/reset-password', { key: rootKey(), body: { tenant_id: account.tenantId, email: account.adminEmail } });
    expect(reset.status, reset.text).toBe(200);
    const salt = srp.generateSalt();
    const verifier = srp.deriveVerifier(srp.derivePrivateKey(salt, account.adminEmail, password));
    const reg = await api('POST', '/api/v1/auth/zkp/register', {
      body: { tenant_id: account.tenantId, email: account.adminEmail, reset_token: reset.body.data.reset_token, salt, verifier },
    });
    expect(reg.status, reg.text).toBe(201);

    const env = envOf(null);
    const args = ['login', '--method', 'password', '--account', account.tenantId, '--email', account.adminEmail];
    const wrong = await fails(args, env, 'not-the-password\n');
    expect(wrong).toMatch(/^error: the password proof was refused.*\(sign_in_failed, request /);
    const login = await ok(args, env, `${password}\n`);
    expect(login.stdout).toMatch(/^Logged in \(session [0-9a-f-]{36}\)/);
    expect(login.stdout + login.stderr).not.toContain(password);
    const stored = JSON.parse(readFileSync(join(env.XDG_CONFIG_HOME!, 'secrets-cli', 'credentials.json'), 'utf8'));
    expect(await admitted(stored.access_token)).toBe(true);
    expect(JSON.parse((await ok(['whoami', '--json'], env)).stdout)).toMatchObject({ user: account.adminEmail, via: 'login' });
    expect(await fails(['login', '--method', 'password'], env)).toBe('error: password sign-in needs --account <account id> and --email <e-mail>');
  }, scaled(60_000));

  it('URL and key mistakes are answered with the fix, in one line', async () => {
    const url = new URL(baseUrl());
    expect(await fails(['secrets', 'list'], envOf(a.adminKey, { SECRETS_API_URL: url.host }))).toBe(
      `error: SECRETS_API_URL "${url.host}" has no scheme: use https://${url.host} (or http://${url.host} for a local server)`,
    );
    expect(await fails(['secrets', 'list'], envOf(a.adminKey, { SECRETS_API_URL: `${baseUrl()}/api/v1/` }))).toBe(
      `error: SECRETS_API_URL ends in /api/v1: give the API's address without it (${baseUrl()}); the CLI adds the /api/v1 paths`,
    );
    expect(await fails(['secrets', 'list'], envOf('not a key'))).toBe(
      'error: SECRETS_API_KEY is not an API key (keys look like scm_xxxxxxxx_… in one piece): copy the whole key again, or use `secrets login` to sign in instead',
    );
    expect(await fails(['login', '--api-url', 'ftp://example.com'], envOf(null))).toBe('error: --api-url must be an http:// or https:// address, not "ftp://example.com"');
    // a well-formed key the server does not know: the server's answer, with what to do
    expect(await fails(['secrets', 'list'], envOf(`scm_aaaaaaaa_${'A'.repeat(43)}`))).toMatch(/^error: .*run `secrets login` again \(or check SECRETS_API_KEY\) \(unauthorized, /);
  }, scaled(60_000));

  it('completion scripts for bash, zsh and fish, made from the command tree; --help lists every command', async () => {
    const env = envOf();
    const bash = (await ok(['completion', 'bash'], env)).stdout;
    const complete = (words: string[]) =>
      new Promise<string>((resolve) => {
        const script = `${bash}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _secrets_complete; printf '%s\\n' "\${COMPREPLY[@]}"`;
        const child = spawn('bash', ['--norc', '-c', script]);
        let o = '';
        child.stdout.on('data', (d) => (o += d));
        child.on('close', () => resolve(o.trim()));
      });
    expect((await complete(['secrets', 'sec'])).split('\n')).toEqual(['secrets']);
    expect((await complete(['secrets', 'secrets', 'r'])).split('\n')).toEqual(['rollback']);
    expect((await complete(['secrets', '-o', 'json', 'secrets', 'get', 'x', '--f'])).split('\n')).toEqual(['--field']);
    expect((await complete(['secrets', 'profile', ''])).split('\n')).toEqual(expect.arrayContaining(['list', 'set', 'use', 'delete']));
    expect((await ok(['completion', 'zsh'], env)).stdout).toMatch(/^#compdef secrets\n[\s\S]*bashcompinit[\s\S]*complete -o default -F _secrets_complete secrets/);
    const fish = (await ok(['completion', 'fish'], env)).stdout;
    expect(fish).toContain("complete -c secrets -f -n '__fish_use_subcommand; and not __fish_seen_subcommand_from");
    expect(fish).toContain("-a rollback -d 'make an older version");
    expect(await fails(['completion', 'powershell'], env)).toBe(
      "error: command-argument value 'powershell' is invalid for argument 'shell'. Allowed choices are bash, zsh, fish. (run with --help for usage)",
    );

    const help = (await ok(['--help'], env)).stdout;
    for (const row of ['-o, --output', '--profile', 'login --method api-key', '--method password', 'profile set', '--field password', '--version 3', 'rollback', 'patch', 'import', 'credentials get', 'run --container', '--tag', '--all', 'export', 'completion bash|zsh|fish', 'SECRETS_PROFILE', '--scope', 'NODE_EXTRA_CA_CERTS'])
      expect(help, row).toContain(row);
  }, scaled(60_000));
});

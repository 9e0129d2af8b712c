import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { OAuthError } from '../client/index.js';
import pkg from '../package.json' with { type: 'json' };
import {
  apiUrlOf,
  CliError,
  connect,
  deleteSecret,
  getSecret,
  listSecrets,
  pollLogin,
  resolveVariables,
  revokeLogin,
  type Secret,
  setSecret,
  sign,
  startLogin,
  storedFrom,
  whoami,
} from './api.js';
import { credentialsPath, readLogin, removeLogin, writeLogin } from './config.js';
import { describeError, progress } from './output.js';

/**
 * `secrets`: the command-line client of the secrets API (docs/cli.md). Output for people on
 * stdout, `--json` for scripts; progress and prompts on stderr; one-line errors (exit 1)
 * that say what to do.
 */
const program = new Command('secrets')
  .description('Command-line client of the secrets API')
  .version(pkg.version)
  .option('--json', 'machine-readable output (JSON on stdout)')
  .showHelpAfterError('(run with --help for usage)');

const json = () => program.opts().json === true;
const print = (human: string, data: unknown) => process.stdout.write(json() ? `${JSON.stringify(data)}\n` : `${human}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A secret's value as one string: its `value` field, else the data as JSON. */
const secretText = (s: Secret) => {
  const data = s.data ?? {};
  const keys = Object.keys(data);
  return keys.length === 1 && keys[0] === 'value' ? String(data.value) : JSON.stringify(data);
};

/** Environment variable names: `db-password` → `DB_PASSWORD`; a multi-field secret gives `NAME_FIELD` each. */
const envName = (s: string) =>
  s
    .toUpperCase()
    .replace(/[^A-Z0-9_]/g, '_')
    .replace(/^(\d)/, '_$1');

program
  .command('login')
  .description('sign in through the browser (device login: approve the code on the sign-in page)')
  .option('--api-url <url>', 'the API address (default: SECRETS_API_URL)')
  .action(async (opts: { apiUrl?: string }) => {
    const apiUrl = apiUrlOf({ ...process.env, ...(opts.apiUrl ? { SECRETS_API_URL: opts.apiUrl } : {}) }, readLogin());
    const auth = await startLogin(apiUrl);
    process.stderr.write(`To sign in, open ${auth.verification_uri_complete}\nand check that it shows the code ${auth.user_code}, then approve.\n`);
    const spinner = progress('waiting for approval in the browser…');
    let interval = auth.interval;
    const deadline = Date.now() + auth.expires_in * 1000;
    try {
      for (;;) {
        await sleep(interval * 1000);
        try {
          const tokens = await pollLogin(apiUrl, auth.device_code);
          writeLogin(storedFrom(apiUrl, tokens));
          spinner.stop();
          print(`Logged in (session ${tokens.session_id}); credentials in ${credentialsPath()}`, {
            logged_in: true,
            session_id: tokens.session_id,
            scope: tokens.scope,
            credentials: credentialsPath(),
          });
          return;
        } catch (error) {
          if (!(error instanceof OAuthError)) throw error;
          if (error.error === 'slow_down') interval += 5;
          else if (error.error === 'access_denied') throw new CliError('the login was denied on the sign-in page: run `secrets login` again');
          else if (error.error === 'expired_token' || Date.now() > deadline)
            throw new CliError('the login code expired before it was approved: run `secrets login` again');
          else if (error.error !== 'authorization_pending') throw error;
        }
      }
    } finally {
      spinner.stop();
    }
  });

program
  .command('logout')
  .description('end the CLI session and forget its credentials')
  .action(async () => {
    const stored = readLogin();
    if (!stored) {
      print('Not logged in.', { logged_out: false });
      return;
    }
    await revokeLogin(stored.api_url, stored.refresh_token);
    removeLogin();
    print('Logged out: the session is ended.', { logged_out: true, session_id: stored.session_id });
  });

program
  .command('whoami')
  .description('who the current credential is')
  .action(async () => {
    const c = await connect();
    const who = await whoami(c);
    if (!who.accepted || !who.credential) throw new CliError(`the credential is refused: ${who.explanation ?? 'run `secrets login`'}`);
    const cr = who.credential;
    print(`${cr.user ?? cr.id} (${cr.kind}) in account ${cr.account_id}; scopes: ${cr.scopes.join(' ')}`, { ...cr, via: c.via });
  });

const secrets = program.command('secrets').description('read and write secrets');

secrets
  .command('list')
  .description('list secret names (never values)')
  .action(async () => {
    const list = await listSecrets(await connect());
    print(
      list.map((s) => s.name).join('\n') || '(no secrets)',
      list.map(({ id, name, description, version }) => ({ id, name, description, version })),
    );
  });

secrets
  .command('get <name>')
  .description('print a secret’s value (`value` field, or its data as JSON)')
  .action(async (name: string) => {
    const { secret, etag } = await getSecret(await connect(), name);
    print(secretText(secret), { ...secret, etag });
  });

secrets
  .command('set <name> [value]')
  .description('create or change a secret; the value from the argument, --data JSON, or stdin with "-"')
  .option('--data <json>', 'several fields as a JSON object of strings')
  .option('--if-match <etag>', 'change only if the secret is still at this version (its ETag)')
  .action(async (name: string, value: string | undefined, opts: { data?: string; ifMatch?: string }) => {
    let data: Record<string, string>;
    if (opts.data !== undefined) {
      try {
        data = JSON.parse(opts.data) as Record<string, string>;
      } catch {
        throw new CliError('--data must be a JSON object, e.g. --data \'{"user":"app","password":"…"}\'');
      }
    } else if (value === '-') data = { value: readFileSync(0, 'utf8').replace(/\r?\n$/, '') };
    else if (value !== undefined) data = { value };
    else throw new CliError('give the value: `secrets secrets set NAME VALUE`, `--data JSON`, or "-" to read it from stdin');
    const out = await setSecret(await connect(), name, data, opts.ifMatch);
    print(`${out.created ? 'Created' : 'Updated'} ${name} (version ${out.secret.version})`, {
      name,
      id: out.secret.id,
      version: out.secret.version,
      etag: out.etag,
      created: out.created,
    });
  });

secrets
  .command('delete <name>')
  .description('delete a secret')
  .option('--if-match <etag>', 'delete only if the secret is still at this version (its ETag)')
  .action(async (name: string, opts: { ifMatch?: string }) => {
    const c = await connect();
    // without --if-match: the version just read, so a change made meanwhile is not deleted unseen
    const etag = opts.ifMatch ?? (await getSecret(c, name)).etag ?? undefined;
    await deleteSecret(c, name, etag);
    print(`Deleted ${name}`, { deleted: true, name });
  });

/** The environment a child gets: secrets by name (NAME or NAME_FIELD) and variables by name. */
async function environment(opts: { secret: string[]; variable: string[] }): Promise<Record<string, string>> {
  if (opts.secret.length === 0 && opts.variable.length === 0)
    throw new CliError('name what to inject: --secret NAME[=ENV_VAR] (repeatable) and/or --variable NAME (repeatable)');
  const c = await connect();
  const env: Record<string, string> = {};
  const spinner = progress('fetching secrets…');
  try {
    for (const spec of opts.secret) {
      const [name, as] = spec.split('=', 2) as [string, string | undefined];
      const { secret } = await getSecret(c, name);
      const data = secret.data ?? {};
      const fields = Object.keys(data);
      if (fields.length === 1 && fields[0] === 'value') env[as ?? envName(name)] = String(data.value);
      else for (const f of fields) env[`${as ?? envName(name)}_${envName(f)}`] = String(data[f]);
    }
    if (opts.variable.length > 0) Object.assign(env, await resolveVariables(c, opts.variable));
  } finally {
    spinner.stop();
  }
  return env;
}

const collect = (v: string, prev: string[]) => [...prev, v];

program
  .command('run')
  .description('run a command with secrets or variables in its environment (values are never printed)')
  .option('-s, --secret <name[=ENV]>', 'inject a secret (repeatable)', collect, [])
  .option('-v, --variable <name>', 'inject a variable, resolved by the API (repeatable)', collect, [])
  .argument('<command...>', 'the command, after --')
  .action(async (command: string[], opts: { secret: string[]; variable: string[] }) => {
    const env = await environment(opts);
    const [file, ...args] = command as [string, ...string[]];
    const child = spawn(file, args, { stdio: 'inherit', env: { ...process.env, ...env } });
    const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
    const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];
    const handlers = signals.map((s) => [s, forward(s)] as const);
    for (const [s, h] of handlers) process.on(s, h);
    const code = await new Promise<number>((resolve, reject) => {
      child.on('error', (e: NodeJS.ErrnoException) =>
        reject(new CliError(e.code === 'ENOENT' ? `command not found: ${file}` : `cannot run ${file}: ${e.message}`)),
      );
      child.on('exit', (status, signal) => {
        for (const [s, h] of handlers) process.off(s, h);
        if (signal) {
          // die of the same signal, so the caller sees what the child saw
          process.kill(process.pid, signal);
          resolve(128);
        } else resolve(status ?? 1);
      });
    });
    process.exitCode = code;
  });

program
  .command('export')
  .description('print secrets or variables as dotenv or JSON (values are printed: mind where they go)')
  .addOption(new Option('--format <format>', 'output format').choices(['dotenv', 'json']).default('dotenv'))
  .option('-s, --secret <name[=ENV]>', 'a secret (repeatable)', collect, [])
  .option('-v, --variable <name>', 'a variable (repeatable)', collect, [])
  .action(async (opts: { format: 'dotenv' | 'json'; secret: string[]; variable: string[] }) => {
    const env = await environment(opts);
    if (opts.format === 'json' || json()) process.stdout.write(`${JSON.stringify(env, null, json() ? 0 : 2)}\n`);
    else
      process.stdout.write(
        Object.entries(env)
          .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
          .join('\n') + '\n',
      );
  });

program
  .command('sign <file>')
  .description('sign a file with a signing key (the key never leaves the service)')
  .requiredOption('--key <key_id>', 'the signing key id')
  .requiredOption('--backend <backend>', 'the signing backend of the key (see the API: GET /api/v1/crypto/keys)')
  .option('--purpose <text>', 'why, for the audit log', 'secrets CLI sign')
  .action(async (file: string, opts: { key: string; backend: string; purpose: string }) => {
    let message: Buffer;
    try {
      message = readFileSync(file);
    } catch {
      throw new CliError(`cannot read ${file}: check the path`);
    }
    const c = await connect();
    const spinner = progress(`signing ${file}…`);
    try {
      const out = await sign(c, { backend: opts.backend, key_id: opts.key, message, purpose: opts.purpose });
      spinner.stop();
      print(out.signature, out);
    } finally {
      spinner.stop();
    }
  });

program.parseAsync(process.argv).catch((error: unknown) => {
  let apiUrl: string | undefined;
  try {
    apiUrl = apiUrlOf(process.env, readLogin());
  } catch {
    apiUrl = undefined;
  }
  const message = describeError(error, apiUrl).replace(/\s+/g, ' ');
  if (json()) process.stdout.write(`${JSON.stringify({ error: message })}\n`);
  process.stderr.write(`error: ${message}\n`);
  process.exitCode = 1;
});

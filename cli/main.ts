import { spawn } from 'node:child_process';
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { JMESPathError, search } from '@aws-lambda-powertools/jmespath';
import { Command, Option } from 'commander';
import { OAuthError } from '../client/index.js';
import pkg from '../package.json' with { type: 'json' };
import {
  apiKeyLogin,
  apiUrlOf,
  apiUrlOfSetup,
  CliError,
  COLLECTIONS,
  checkApiKey,
  checkApiUrl,
  connect,
  deleteSecret,
  getItem,
  getSecret,
  listCollection,
  listContainers,
  listSecrets,
  passwordLogin,
  pollLogin,
  putSecretData,
  resolveVariables,
  revokeLogin,
  type Secret,
  secretVersion,
  secretVersions,
  type Setup,
  setSecret,
  setupOf,
  sign,
  startLogin,
  storedFrom,
  whoami,
} from './api.js';
import { completionScript, SHELLS, type Shell } from './completion.js';
import {
  activeProfile,
  configDir,
  credentialsPath,
  DEFAULT_PROFILE,
  isProfileName,
  readConfig,
  readStored,
  removeLogin,
  scopeOf,
  writeConfig,
  writeLogin,
} from './config.js';
import { buildEnvironment, IMPORT_FORMATS, type ImportFormat, type Injected, importFormatOf, parseImport } from './environment.js';
import { describeError, dotenv, FORMATS, type Format, progress, render } from './output.js';
import { readHidden } from './prompt.js';

/**
 * `secrets`: the command-line client of the secrets API (docs/api.md, "The command-line
 * client"). Output for people on stdout; `--output json|yaml|table|env` (`--json` is
 * `--output json`) for scripts; progress and prompts on stderr; one-line errors (exit 1)
 * that say what to do; `--query` picks from a result with JMESPath, as the AWS CLI's does. The
 * global options (`--output`, `--json`, `--query`, `--profile`) go before or
 * after the command, as in the AWS CLI; `--version` after `secrets get` is the secret's version
 * (`vault kv get -version=3`), before any command the CLI's own.
 */
const program = new Command('secrets')
  .description('Command-line client of the secrets API')
  .version(pkg.version, '-V, --version', 'the CLI’s version')
  .enablePositionalOptions()
  // usage mistakes too are one line on stderr (scripts and the tests read the first line)
  .configureOutput({ outputError: (str, write) => write(`${str.trim().replace(/\s*\n\s*/g, ' ')} (run with --help for usage)\n`) })
  .addHelpText(
    'after',
    `
Examples (every command takes -o json|yaml|table|env, --json and --profile NAME):
  secrets login                                   sign in through the browser (device code)
  secrets login --method api-key < key.txt        sign in with an API key (prompted on a terminal)
  secrets login --method password --account ID --email you@example.com
  secrets profile set prod --api-url https://api.example.com; secrets profile use prod   (or SECRETS_PROFILE=prod)
  secrets profile use staging --scope .           in this project's folder and below (doppler setup)
  secrets secrets list [--container NAME] [--tag TAG] -o table
  secrets secrets get db --field password         one field, as is (vault kv get -field)
  secrets secrets get db --version 3              an older version; \`secrets secrets versions db\` lists them
  secrets secrets rollback db --version 3         restore it as a new version
  secrets secrets set db --data '{"user":"app","password":"…"}'   (replaces every field)
  secrets secrets patch db password=…             change some fields, keep the others
  secrets secrets import .env --dry-run           many secrets from dotenv, JSON or YAML
  secrets credentials get wifi-credentials office --field password   typed credentials by collection
  secrets run --container app -- ./server         (or -s NAME[=ENV], --tag TAG, --all; same-named variables are refused)
  secrets export --all --format env|json|yaml|docker
  secrets completion bash|zsh|fish                shell completion
Environment: SECRETS_API_URL (the API's address, without /api/v1), SECRETS_API_KEY, SECRETS_PROFILE,
  NODE_EXTRA_CA_CERTS (a PEM file of the private CA that issued the API's TLS certificate: vault's VAULT_CACERT).`,
  );

/** The global options, which every command takes too (added to each one below). */
const globalOptions = () => [
  new Option('-o, --output <format>', 'output for scripts').choices(FORMATS),
  new Option('--json', 'the same as --output json'),
  new Option(
    '--query <expression>',
    'a JMESPath expression applied to the result before it is printed (aws --query); JSON unless --output says otherwise',
  ),
  new Option('--profile <name>', "the profile to use (default: SECRETS_PROFILE, then the folder's `profile use --scope`, then `profile use`)"),
];
for (const o of globalOptions()) program.addOption(o);

interface Globals {
  output?: Format;
  json?: boolean;
  query?: string;
  profile?: string;
}
let current: Command = program;
const globals = (): Globals => ({ ...program.opts<Globals>(), ...current.opts<Globals>() });
const format = (): Format | undefined => globals().output ?? (globals().json ? 'json' : undefined);
const setup = (): Setup => {
  const profile = activeProfile(globals().profile);
  if (!isProfileName(profile)) throw new CliError(`"${profile}" is not a profile name: letters, digits, ".", "_", "-"`);
  return setupOf(profile);
};
const out = (text: string) => process.stdout.write(`${text}\n`);
/**
 * A result as the global options ask: `--query` (JMESPath, the AWS CLI's) picks from the data
 * first, and its pick is printed as JSON unless `--output` names another format; without
 * `--query`, the human text or the data in the `--output` format.
 */
const print = (human: string, data: unknown, columns?: readonly string[]) => {
  const { query } = globals();
  if (query === undefined) return out(render(format(), data, human, columns));
  let picked: unknown;
  try {
    picked = search(query, data as Parameters<typeof search>[1]);
  } catch (error) {
    if (error instanceof JMESPathError)
      throw new CliError(`--query "${query}" is not a JMESPath expression the result can answer: ${error.message} (https://jmespath.org)`);
    throw error;
  }
  out(render(format() ?? 'json', picked ?? null, '', columns));
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const collect = (v: string, prev: string[]) => [...prev, v];
const positiveInt = (what: string) => (v: string) => {
  if (!/^[1-9]\d*$/.test(v)) throw new CliError(`${what} must be a positive whole number, not "${v}"`);
  return Number(v);
};

/** A secret's value as one string: its `value` field, else the data as JSON. */
const secretText = (data: Record<string, unknown>) => {
  const keys = Object.keys(data);
  return keys.length === 1 && keys[0] === 'value' ? String(data.value) : JSON.stringify(data);
};

/** `--field F`: that field alone, printed as is (vault kv get -field). */
function field(data: Record<string, unknown>, name: string): string {
  if (!(name in data)) throw new CliError(`no field "${name}": the fields are ${Object.keys(data).join(', ') || '(none)'}`);
  const v = data[name];
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** FIELD=VALUE arguments (`vault kv patch`, `infisical secrets set A=1`). */
function pairs(args: string[]): Record<string, string> {
  const data: Record<string, string> = {};
  for (const a of args) {
    const i = a.indexOf('=');
    if (i < 1) throw new CliError(`"${a}" is not FIELD=VALUE: e.g. password=s3cret (VALUE "-" reads it from stdin)`);
    const value = a.slice(i + 1);
    data[a.slice(0, i)] = value === '-' ? readFileSync(0, 'utf8').replace(/\r?\n$/, '') : value;
  }
  return data;
}

// ------------------------------------------------------------------ sign-in

const METHODS = ['device', 'api-key', 'password'] as const;

program
  .command('login')
  .description('sign in: through the browser (device code, default), with an API key, or with your password (SRP)')
  .option('--api-url <url>', 'the API address (default: SECRETS_API_URL, then the profile’s)')
  .addOption(new Option('--method <method>', 'how to sign in').choices(METHODS).default('device'))
  .option('--account <id>', 'your account id (password sign-in)')
  .option('--email <email>', 'your e-mail (password sign-in)')
  .action(async (opts: { apiUrl?: string; method: (typeof METHODS)[number]; account?: string; email?: string }) => {
    const s = setup();
    const apiUrl = opts.apiUrl ? checkApiUrl(opts.apiUrl, '--api-url') : apiUrlOfSetup(s);
    const remember = () => {
      const config = readConfig(s.dir);
      writeConfig({ ...config, profiles: { ...config.profiles, [s.profile]: { ...config.profiles[s.profile], api_url: apiUrl } } }, s.dir);
    };
    const where = credentialsPath(s.dir, s.profile);
    if (opts.method === 'api-key') {
      const key = checkApiKey(await readHidden('API key: '), 'the API key given');
      writeLogin(await apiKeyLogin(apiUrl, key), s.dir, s.profile);
      remember();
      print(`Logged in with an API key (profile ${s.profile}); stored in ${where}`, {
        logged_in: true,
        via: 'api_key',
        profile: s.profile,
        credentials: where,
      });
      return;
    }
    if (opts.method === 'password') {
      if (!opts.account || !opts.email) throw new CliError('password sign-in needs --account <account id> and --email <e-mail>');
      const password = await readHidden('Password: ');
      if (!password) throw new CliError('no password given: type it at the prompt or pipe it on stdin');
      const tokens = await passwordLogin(apiUrl, opts.account, opts.email, password);
      writeLogin(storedFrom(apiUrl, tokens), s.dir, s.profile);
      remember();
      print(`Logged in (session ${tokens.session_id}); credentials in ${where}`, {
        logged_in: true,
        via: 'password',
        session_id: tokens.session_id,
        scope: tokens.scope,
        credentials: where,
      });
      return;
    }
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
          writeLogin(storedFrom(apiUrl, tokens), s.dir, s.profile);
          remember();
          spinner.stop();
          print(`Logged in (session ${tokens.session_id}); credentials in ${where}`, {
            logged_in: true,
            session_id: tokens.session_id,
            scope: tokens.scope,
            credentials: where,
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
    const s = setup();
    const stored = readStored(s.dir, s.profile);
    if (!stored) {
      print('Not logged in.', { logged_out: false });
      return;
    }
    if ('refresh_token' in stored) await revokeLogin(stored.api_url, stored.refresh_token);
    removeLogin(s.dir, s.profile);
    if ('refresh_token' in stored) print('Logged out: the session is ended.', { logged_out: true, session_id: stored.session_id });
    else print('Logged out: the API key is forgotten here (it stays valid until revoked).', { logged_out: true });
  });

program
  .command('whoami')
  .description('who the current credential is')
  .action(async () => {
    const c = await connect(setup());
    const who = await whoami(c);
    if (!who.accepted || !who.credential) throw new CliError(`the credential is refused: ${who.explanation ?? 'run `secrets login`'}`);
    const cr = who.credential;
    print(`${cr.user ?? cr.id} (${cr.kind}) in account ${cr.account_id}; scopes: ${cr.scopes.join(' ')}`, { ...cr, via: c.via });
  });

// ------------------------------------------------------------------ profiles, completion

const profile = program.command('profile').description('named profiles (an API address and its credential each), in the config folder');

profile
  .command('list')
  .description('the profiles, the one in use marked')
  .action(() => {
    const s = setup();
    const config = readConfig(s.dir);
    const names = [...new Set([DEFAULT_PROFILE, ...Object.keys(config.profiles)])].sort();
    const rows = names.map((name) => ({
      name,
      current: name === s.profile,
      api_url: config.profiles[name]?.api_url ?? readStored(s.dir, name)?.api_url ?? null,
      signed_in: readStored(s.dir, name) !== undefined,
      scopes: Object.keys(config.scopes ?? {})
        .filter((d) => config.scopes![d] === name)
        .sort(),
    }));
    print(
      rows
        .map(
          (r) =>
            `${r.current ? '*' : ' '} ${r.name}${r.api_url ? `  ${r.api_url}` : ''}${r.signed_in ? '' : '  (not logged in)'}${r.scopes.length > 0 ? `  (in ${r.scopes.join(', ')})` : ''}`,
        )
        .join('\n'),
      rows,
    );
  });

profile
  .command('set <name>')
  .description('create or change a profile')
  .requiredOption('--api-url <url>', 'the API address of this profile')
  .action((name: string, opts: { apiUrl: string }) => {
    if (!isProfileName(name)) throw new CliError(`"${name}" is not a profile name: letters, digits, ".", "_", "-"`);
    const s = setup();
    const apiUrl = checkApiUrl(opts.apiUrl, '--api-url');
    const config = readConfig(s.dir);
    writeConfig({ ...config, profiles: { ...config.profiles, [name]: { api_url: apiUrl } } }, s.dir);
    print(`Profile ${name}: ${apiUrl} (sign in with \`secrets --profile ${name} login\`)`, { name, api_url: apiUrl });
  });

/** A directory as the working directory reads it (symbolic links resolved), or the fix. */
function scopeDir(path: string): string {
  try {
    const real = realpathSync(path);
    if (statSync(real).isDirectory()) return real;
  } catch {
    // answered below
  }
  throw new CliError(`--scope "${path}" is not a directory: name the project's folder (\`.\` is the current one)`);
}

profile
  .command('use <name>')
  .description('the profile to use when neither --profile nor SECRETS_PROFILE says; --scope DIR: only in DIR and below (doppler setup)')
  .option('--scope <dir>', 'use it only in this directory and the ones below it (`.`: the current one)')
  .action((name: string, opts: { scope?: string }) => {
    if (!isProfileName(name)) throw new CliError(`"${name}" is not a profile name: letters, digits, ".", "_", "-"`);
    const dir = configDir();
    const config = readConfig(dir);
    if (name !== DEFAULT_PROFILE && !config.profiles[name])
      throw new CliError(`no profile ${name}: create it with \`secrets profile set ${name} --api-url <url>\``);
    if (opts.scope !== undefined) {
      const where = scopeDir(opts.scope);
      writeConfig({ ...config, scopes: { ...config.scopes, [where]: name } }, dir);
      print(`Using profile ${name} in ${where} and below`, { profile: name, scope: where });
      return;
    }
    writeConfig({ ...config, current_profile: name }, dir);
    print(`Using profile ${name}`, { current_profile: name });
  });

profile
  .command('unscope [dir]')
  .description('stop using a profile in a directory (`profile use NAME --scope DIR`); default: the current directory')
  .action((path: string | undefined) => {
    const dir = configDir();
    const config = readConfig(dir);
    const where = scopeDir(path ?? '.');
    const name = config.scopes?.[where];
    if (!name) {
      const covering = scopeOf(config, where);
      throw new CliError(
        covering
          ? `no profile is scoped to ${where}: ${covering.dir} is (profile ${covering.profile}); \`secrets profile unscope ${covering.dir}\``
          : `no profile is scoped to ${where} or above it`,
      );
    }
    const { [where]: _gone, ...scopes } = config.scopes!;
    writeConfig({ ...config, scopes }, dir);
    print(`Profile ${name} is no longer used in ${where}`, { profile: name, scope: where, removed: true });
  });

profile
  .command('delete <name>')
  .description('forget a profile and its stored credential')
  .action((name: string) => {
    const dir = configDir();
    const config = readConfig(dir);
    const { [name]: _gone, ...rest } = config.profiles;
    const scopes = Object.fromEntries(Object.entries(config.scopes ?? {}).filter(([, p]) => p !== name));
    removeLogin(dir, name);
    writeConfig(
      {
        ...(config.current_profile && config.current_profile !== name ? { current_profile: config.current_profile } : {}),
        profiles: rest,
        ...(Object.keys(scopes).length > 0 ? { scopes } : {}),
      },
      dir,
    );
    print(`Deleted profile ${name}`, { deleted: true, name });
  });

program
  .command('completion')
  .description(
    'print the shell completion script: `source <(secrets completion bash)`; zsh likewise; fish: `secrets completion fish > ~/.config/fish/completions/secrets.fish`',
  )
  .addArgument(new Command().createArgument('<shell>', 'bash, zsh or fish').choices(SHELLS))
  .action((shell: Shell) => {
    process.stdout.write(completionScript(program, shell));
  });

// ------------------------------------------------------------------ secrets

const secrets = program.command('secrets').description('read and write secrets');

/** The secrets a selector names: a container (by name or id), a tag, or every readable one. */
async function selectSecrets(c: Awaited<ReturnType<typeof connect>>, opts: { container?: string; tag?: string[] }): Promise<Secret[]> {
  let list = await listSecrets(c);
  if (opts.container !== undefined) {
    const containers = await listContainers(c);
    const found = containers.filter((k) => k.id === opts.container || k.name === opts.container);
    if (found.length === 0)
      throw new CliError(`no container "${opts.container}": the containers are ${containers.map((k) => k.name).join(', ') || '(none)'}`);
    if (found.length > 1)
      throw new CliError(`${found.length} containers are named "${opts.container}": give the id (${found.map((k) => k.id).join(', ')})`);
    list = list.filter((s) => (s as { container_id?: string | null }).container_id === found[0]!.id);
  }
  for (const tag of opts.tag ?? []) list = list.filter((s) => ((s as { tags?: string[] }).tags ?? []).includes(tag));
  return list;
}

secrets
  .command('list')
  .description('list secrets (names and versions, never values)')
  .option('--container <name|id>', 'only the secrets of this container')
  .option('--tag <tag>', 'only the secrets with this tag (repeatable: all of them)', collect, [])
  .action(async (opts: { container?: string; tag: string[] }) => {
    const list = await selectSecrets(await connect(setup()), opts);
    print(
      list.map((s) => s.name).join('\n') || '(no secrets)',
      list.map(({ id, name, description, version, updated_at, ...rest }) => ({
        id,
        name,
        description,
        version,
        tags: (rest as { tags?: string[] }).tags ?? [],
        updated_at,
      })),
      ['name', 'version', 'tags', 'updated_at', 'id'],
    );
  });

secrets
  .command('get <name>')
  .description('print a secret’s value (its `value` field, or its data as JSON); --field for one field, --version for an older version')
  .option('--field <field>', 'print only this field, as is')
  .option('--version <n>', 'this version (from `secrets versions NAME`)', positiveInt('--version'))
  .action(async (name: string, opts: { field?: string; version?: number }) => {
    const c = await connect(setup());
    const { secret, etag } = await getSecret(c, name);
    let data = (secret.data ?? {}) as Record<string, string>;
    let version = secret.version;
    if (opts.version !== undefined && opts.version !== secret.version) {
      const old = await secretVersion(c, secret.id, opts.version);
      data = old.data;
      version = old.version;
    }
    if (opts.field !== undefined) {
      out(field(data, opts.field));
      return;
    }
    print(secretText(data), format() === 'env' ? data : { ...secret, data, version, etag: version === secret.version ? etag : null });
  });

secrets
  .command('versions <name>')
  .alias('metadata')
  .description('the kept versions of a secret, newest first (vault kv metadata; values are not shown)')
  .action(async (name: string) => {
    const c = await connect(setup());
    const { secret } = await getSecret(c, name);
    const h = await secretVersions(c, secret.id);
    const rows = h.versions.map((v) => ({ version: v.version, current: v.current, created_at: v.created_at, created_by: v.created_by }));
    print(rows.map((r) => `${r.version}${r.current ? ' (current)' : ''}  ${r.created_at}  ${r.created_by ?? ''}`.trimEnd()).join('\n'), rows, [
      'version',
      'current',
      'created_at',
      'created_by',
    ]);
  });

secrets
  .command('rollback <name>')
  .description('make an older version the current value again (a new version, like vault kv rollback)')
  .requiredOption('--version <n>', 'the version to restore', positiveInt('--version'))
  .action(async (name: string, opts: { version: number }) => {
    const c = await connect(setup());
    const { secret, etag } = await getSecret(c, name);
    const old = await secretVersion(c, secret.id, opts.version);
    const res = await putSecretData(c, name, old.data, etag ?? '*');
    print(`Rolled back ${name} to version ${opts.version} (now version ${res.secret.version})`, {
      name,
      restored: opts.version,
      version: res.secret.version,
      etag: res.etag,
    });
  });

secrets
  .command('set <name> [value]')
  .description('create or change a secret; the value from the argument, --data JSON, or stdin with "-" (replaces every field: `patch` merges)')
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
    const res = await setSecret(await connect(setup()), name, data, opts.ifMatch);
    print(`${res.created ? 'Created' : 'Updated'} ${name} (version ${res.secret.version})`, {
      name,
      id: res.secret.id,
      version: res.secret.version,
      etag: res.etag,
      created: res.created,
    });
  });

secrets
  .command('patch <name> <field=value...>')
  .description('change some fields of a secret and keep the others (vault kv patch)')
  .option('--if-match <etag>', 'change only if the secret is still at this version (its ETag)')
  .action(async (name: string, args: string[], opts: { ifMatch?: string }) => {
    const changes = pairs(args);
    const c = await connect(setup());
    const { secret, etag } = await getSecret(c, name);
    const res = await putSecretData(c, name, { ...((secret.data ?? {}) as Record<string, string>), ...changes }, opts.ifMatch ?? etag ?? '*');
    print(`Patched ${name}: ${Object.keys(changes).join(', ')} (version ${res.secret.version})`, {
      name,
      fields: Object.keys(changes),
      version: res.secret.version,
      etag: res.etag,
    });
  });

secrets
  .command('delete <name>')
  .description('delete a secret')
  .option('--if-match <etag>', 'delete only if the secret is still at this version (its ETag)')
  .action(async (name: string, opts: { ifMatch?: string }) => {
    const c = await connect(setup());
    // without --if-match: the version just read, so a change made meanwhile is not deleted unseen
    const etag = opts.ifMatch ?? (await getSecret(c, name)).etag ?? undefined;
    await deleteSecret(c, name, etag);
    print(`Deleted ${name}`, { deleted: true, name });
  });

secrets
  .command('import <file>')
  .description('create or update many secrets from a dotenv, JSON or YAML file ("-": stdin); --dry-run shows what would change')
  .addOption(new Option('--format <format>', 'the file’s format (default: from its extension, else dotenv)').choices(IMPORT_FORMATS))
  .option('--dry-run', 'change nothing: list what would be created and updated')
  .action(async (file: string, opts: { format?: ImportFormat; dryRun?: boolean }) => {
    let text: string;
    try {
      text = readFileSync(file === '-' ? 0 : file, 'utf8');
    } catch {
      throw new CliError(`cannot read ${file}: check the path`);
    }
    const entries = parseImport(text, opts.format ?? importFormatOf(file));
    const c = await connect(setup());
    const existing = new Set((await listSecrets(c)).map((s) => s.name));
    const plan = Object.entries(entries).map(([name, data]) => ({
      name,
      action: existing.has(name) ? 'update' : 'create',
      fields: Object.keys(data),
    }));
    if (!opts.dryRun) for (const p of plan) await setSecret(c, p.name, entries[p.name]!);
    const verb = (a: string) => (opts.dryRun ? `would ${a}` : `${a}d`);
    print(
      [...plan.map((p) => `${verb(p.action)} ${p.name} (${p.fields.join(', ')})`), opts.dryRun ? '(dry run: nothing changed)' : '']
        .filter(Boolean)
        .join('\n'),
      { dry_run: opts.dryRun === true, secrets: plan },
    );
  });

// ------------------------------------------------------------------ typed credentials

const credentials = program.command('credentials').description('typed credentials (passwords, Wi-Fi, VPN, …) by collection');

credentials
  .command('types')
  .description('the collections')
  .action(() => {
    print(COLLECTIONS.join('\n'), [...COLLECTIONS]);
  });

credentials
  .command('list <collection>')
  .description('the items of a collection (metadata, never secret fields)')
  .action(async (collection: string) => {
    const items = await listCollection(await connect(setup()), collection);
    print(items.map((i) => `${i.id}  ${String(i.name ?? i.title ?? '')}`).join('\n') || '(none)', items, ['name', 'id', 'updated_at']);
  });

credentials
  .command('get <collection> <id-or-name>')
  .description('one item with its fields; --field for one of them')
  .option('--field <field>', 'print only this field, as is')
  .action(async (collection: string, idOrName: string, opts: { field?: string }) => {
    const item = await getItem(await connect(setup()), collection, idOrName);
    if (opts.field !== undefined) {
      out(field(item, opts.field));
      return;
    }
    print(JSON.stringify(item, null, 2), item);
  });

// ------------------------------------------------------------------ run, export

interface Selection {
  secret: string[];
  variable: string[];
  container?: string;
  tag: string[];
  all?: boolean;
}

const selectionOptions = (cmd: Command) =>
  cmd
    .option('-s, --secret <name[=ENV]>', 'a secret (repeatable)', collect, [])
    .option('-v, --variable <name>', 'a variable, resolved by the API (repeatable)', collect, [])
    .option('--container <name|id>', 'every secret of this container')
    .option('--tag <tag>', 'every secret with this tag (repeatable: all of them)', collect, [])
    .option('--all', 'every secret this credential can read');

/** The environment of a selection: the secrets named, or those of a container / tag / all, and variables. */
async function environment(opts: Selection): Promise<Record<string, string>> {
  const scoped = opts.all === true || opts.container !== undefined || opts.tag.length > 0;
  if (opts.secret.length === 0 && opts.variable.length === 0 && !scoped)
    throw new CliError('name what to inject: --secret NAME[=ENV_VAR] and/or --variable NAME (repeatable), or --container NAME, --tag TAG, --all');
  const c = await connect(setup());
  const spinner = progress('fetching secrets…');
  try {
    const wanted: { name: string; as?: string }[] = opts.secret.map((spec) => {
      const [name, as] = spec.split('=', 2) as [string, string | undefined];
      return as ? { name, as } : { name };
    });
    if (scoped) for (const s of await selectSecrets(c, opts)) if (!wanted.some((w) => w.name === s.name)) wanted.push({ name: s.name });
    const injected: Injected[] = [];
    for (const w of wanted) {
      const { secret } = await getSecret(c, w.name);
      injected.push({ name: w.name, data: (secret.data ?? {}) as Record<string, string>, ...(w.as ? { as: w.as } : {}) });
    }
    const variables = opts.variable.length > 0 ? await resolveVariables(c, opts.variable) : {};
    return buildEnvironment(injected, variables);
  } finally {
    spinner.stop();
  }
}

selectionOptions(
  program
    .command('run')
    .description('run a command with secrets or variables in its environment (values are never printed)')
    .argument('<command...>', 'the command, after --')
    .passThroughOptions(),
).action(async (command: string[], opts: Selection): Promise<void> => {
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

const EXPORT_FORMATS = ['dotenv', 'env', 'json', 'yaml', 'docker'] as const;

selectionOptions(
  program
    .command('export')
    .description('print secrets or variables as dotenv, JSON, YAML or a docker --env-file (values are printed: mind where they go)')
    .addOption(new Option('--format <format>', 'output format (default: dotenv, or --output)').choices(EXPORT_FORMATS)),
).action(async (opts: Selection & { format?: (typeof EXPORT_FORMATS)[number] }) => {
  const env = await environment(opts);
  const f = opts.format ?? (format() === 'table' ? 'dotenv' : format()) ?? 'dotenv';
  if (f === 'json') out(JSON.stringify(env, null, globals().output || globals().json ? 0 : 2));
  else if (f === 'yaml') out(render('yaml', env, ''));
  else if (f === 'docker') {
    // docker's --env-file takes VAR=value literally, one a line: a newline cannot be written
    const multi = Object.keys(env).filter((k) => /[\r\n]/.test(env[k]!));
    if (multi.length > 0)
      throw new CliError(`${multi.join(', ')} span several lines, which a docker --env-file cannot hold: use --format dotenv or json`);
    out(
      Object.entries(env)
        .map(([k, v]) => `${k}=${v}`)
        .join('\n'),
    );
  } else out(dotenv(env));
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
    const c = await connect(setup());
    const spinner = progress(`signing ${file}…`);
    try {
      const res = await sign(c, { backend: opts.backend, key_id: opts.key, message, purpose: opts.purpose });
      spinner.stop();
      print(res.signature, res);
    } finally {
      spinner.stop();
    }
  });

/** Every command takes the global options too (after its name), and knows it is the one running. */
function everywhere(cmd: Command): void {
  for (const sub of cmd.commands) {
    if (sub.commands.length === 0) for (const o of globalOptions()) sub.addOption(o);
    sub.hook('preAction', (_this, actionCommand) => {
      current = actionCommand;
    });
    everywhere(sub);
  }
}
everywhere(program);

program.parseAsync(process.argv).catch((error: unknown) => {
  let apiUrl: string | undefined;
  try {
    const s = setupOf(activeProfile(globals().profile));
    apiUrl = apiUrlOf(s.env, readStored(s.dir, s.profile), readConfig(s.dir), s.profile);
  } catch {
    apiUrl = undefined;
  }
  const message = describeError(error, apiUrl).replace(/\s+/g, ' ');
  if (format() === 'json') out(JSON.stringify({ error: message }));
  process.stderr.write(`error: ${message}\n`);
  process.exitCode = 1;
});

import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

/**
 * Where the CLI keeps its settings: the OS's per-user configuration directory
 * (`$XDG_CONFIG_HOME` or `~/.config` on Linux and other Unixes, `~/Library/Application
 * Support` on macOS, `%APPDATA%` on Windows), folder `secrets-cli`:
 *
 * - `config.json`: the profiles (`{ current_profile, profiles: { <name>: { api_url } },
 *   scopes: { <absolute directory>: <name> } }`), one per API and account, like the AWS CLI's
 *   named profiles or Vault's per-address tokens; a scope binds a profile to a directory and
 *   the directories below it (`doppler setup`'s per-directory configuration);
 * - `credentials.json` (profile `default`) and `credentials.<profile>.json`: the profile's
 *   credential, a CLI login (its rotating refresh token) or an API key stored by
 *   `secrets login --method api-key`.
 *
 * The folder is 0700 and the credential files 0600: what is in them opens a session.
 */
export interface StoredLogin {
  readonly api_url: string;
  readonly access_token: string;
  /** Epoch milliseconds. */
  readonly access_expires_at: number;
  readonly refresh_token: string;
  readonly session_id: string;
  readonly scope: string;
}

/** An API key stored for a profile (never an argument: read from the terminal or stdin). */
export interface StoredApiKey {
  readonly api_url: string;
  readonly api_key: string;
}

export interface Profile {
  readonly api_url?: string;
}

export interface CliConfig {
  readonly current_profile?: string;
  readonly profiles: Readonly<Record<string, Profile>>;
  /** Absolute directory -> the profile used there and below (`secrets profile use NAME --scope DIR`). */
  readonly scopes?: Readonly<Record<string, string>>;
}

export const DEFAULT_PROFILE = 'default';
const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function configDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  if (platform === 'win32') return join(env.APPDATA || join(homedir(), 'AppData', 'Roaming'), 'secrets-cli');
  if (platform === 'darwin') return join(homedir(), 'Library', 'Application Support', 'secrets-cli');
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'secrets-cli');
}

/** A profile name is a file name part: letters, digits, `.`, `_`, `-` (the CLI says so when it is not). */
export const isProfileName = (name: string) => PROFILE_NAME.test(name);

export const credentialsPath = (dir = configDir(), profile = DEFAULT_PROFILE) =>
  join(dir, profile === DEFAULT_PROFILE ? 'credentials.json' : `credentials.${profile}.json`);
export const configPath = (dir = configDir()) => join(dir, 'config.json');

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

function writePrivate(dir: string, file: string, value: unknown): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
}

export function readStored(dir = configDir(), profile = DEFAULT_PROFILE): StoredLogin | StoredApiKey | undefined {
  const v = readJson(credentialsPath(dir, profile)) as Partial<StoredLogin & StoredApiKey> | undefined;
  if (!v || typeof v.api_url !== 'string') return undefined;
  if (typeof v.refresh_token === 'string') return v as StoredLogin;
  if (typeof v.api_key === 'string') return v as StoredApiKey;
  return undefined;
}

export function readLogin(dir = configDir(), profile = DEFAULT_PROFILE): StoredLogin | undefined {
  const v = readStored(dir, profile);
  return v && 'refresh_token' in v ? v : undefined;
}

export function writeLogin(login: StoredLogin | StoredApiKey, dir = configDir(), profile = DEFAULT_PROFILE): void {
  writePrivate(dir, credentialsPath(dir, profile), login);
}

export function removeLogin(dir = configDir(), profile = DEFAULT_PROFILE): void {
  rmSync(credentialsPath(dir, profile), { force: true });
}

export function readConfig(dir = configDir()): CliConfig {
  const v = readJson(configPath(dir)) as Partial<CliConfig> | undefined;
  const profiles = v && typeof v.profiles === 'object' && v.profiles !== null ? v.profiles : {};
  const scopes =
    v && typeof v.scopes === 'object' && v.scopes !== null
      ? Object.fromEntries(Object.entries(v.scopes).filter(([d, p]) => typeof p === 'string' && d === resolve(d)))
      : {};
  return {
    ...(typeof v?.current_profile === 'string' ? { current_profile: v.current_profile } : {}),
    profiles,
    ...(Object.keys(scopes).length > 0 ? { scopes } : {}),
  };
}

/** The scope that covers `cwd`: the bound directory nearest to it (itself, or its closest parent). */
export function scopeOf(config: CliConfig, cwd: string = process.cwd()): { dir: string; profile: string } | undefined {
  for (let d = resolve(cwd); ; d = dirname(d)) {
    const profile = config.scopes?.[d];
    if (profile) return { dir: d, profile };
    if (dirname(d) === d) return undefined;
  }
}

export function writeConfig(config: CliConfig, dir = configDir()): void {
  writePrivate(dir, configPath(dir), config);
}

/**
 * The profile in use: `--profile`, else `SECRETS_PROFILE`, else the scope of the working
 * directory (`secrets profile use NAME --scope DIR`), else the one `secrets profile use`
 * chose, else `default`.
 */
export function activeProfile(flag: string | undefined, env: NodeJS.ProcessEnv = process.env, dir = configDir(), cwd = process.cwd()): string {
  if (flag || env.SECRETS_PROFILE) return (flag || env.SECRETS_PROFILE)!;
  const config = readConfig(dir);
  return scopeOf(config, cwd)?.profile || config.current_profile || DEFAULT_PROFILE;
}

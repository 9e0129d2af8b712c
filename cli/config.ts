import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Where the CLI keeps its login: the OS's per-user configuration directory
 * (`$XDG_CONFIG_HOME` or `~/.config` on Linux and other Unixes, `~/Library/Application
 * Support` on macOS, `%APPDATA%` on Windows), folder `secrets-cli`, file `credentials.json`.
 * The folder is 0700 and the file 0600: the refresh token in it opens a session.
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

export function configDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  if (platform === 'win32') return join(env.APPDATA || join(homedir(), 'AppData', 'Roaming'), 'secrets-cli');
  if (platform === 'darwin') return join(homedir(), 'Library', 'Application Support', 'secrets-cli');
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'secrets-cli');
}

export const credentialsPath = (dir = configDir()) => join(dir, 'credentials.json');

export function readLogin(dir = configDir()): StoredLogin | undefined {
  let text: string;
  try {
    text = readFileSync(credentialsPath(dir), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const v = JSON.parse(text) as StoredLogin;
    return typeof v.refresh_token === 'string' && typeof v.api_url === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

export function writeLogin(login: StoredLogin, dir = configDir()): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const file = credentialsPath(dir);
  writeFileSync(file, `${JSON.stringify(login, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
}

export function removeLogin(dir = configDir()): void {
  rmSync(credentialsPath(dir), { force: true });
}

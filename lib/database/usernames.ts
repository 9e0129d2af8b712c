import { randomBytes } from 'node:crypto';
import type { Engine } from './settings.js';

/**
 * Lease logins. A login name comes from the role's `username_template` (default
 * `v_{{role}}_{{random}}`): `{{role}}` is the role's name reduced to at most 8 lower-case
 * letters and digits (so a role name cannot carry SQL), `{{random}}` 16 random characters
 * (required: it makes every login unique), `{{unix_time}}` the issue time in seconds. The
 * result must be letters, digits, `_` and `-`, start with a letter or `_`, and fit the
 * engine (PostgreSQL 63, MariaDB 80, MySQL 32 characters). The name is then quoted with the
 * driver's escaping like any other value. Passwords are 32 random base64url characters.
 */
const DEFAULT_USERNAME_TEMPLATE = 'v_{{role}}_{{random}}';

const MAX_LENGTH: Record<Engine, number> = { postgresql: 63, mariadb: 80, mysql: 32 };
const NAME_RE = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const TOKEN_RE = /\{\{\s*([^{}]*?)\s*\}\}/g;
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

export const roleSlug = (roleName: string) =>
  roleName
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '')
    .slice(0, 8);

function randomChars(n: number): string {
  const bytes = randomBytes(n);
  let out = '';
  for (let i = 0; i < n; i++) out += ALPHABET[bytes[i]! & 31];
  return out;
}

export const newPassword = (): string => randomBytes(24).toString('base64url');

function render(template: string, values: { role: string; random: string; unix_time: string }): string {
  return template.replace(TOKEN_RE, (_m, name: string) => {
    if (!(name in values)) throw new Error(`unknown placeholder {{${name.slice(0, 40)}}}: use {{role}}, {{random}} or {{unix_time}}`);
    return values[name as keyof typeof values];
  });
}

/** Why a username template is unusable for this engine, or null. */
export function checkUsernameTemplate(template: string, engine: Engine | undefined): string | null {
  if (!/\{\{\s*random\s*\}\}/.test(template)) return 'must contain {{random}} so that every lease gets its own login';
  let sample: string;
  try {
    sample = render(template, { role: 'abcdefgh', random: 'a'.repeat(16), unix_time: '1' + '0'.repeat(9) });
  } catch (error) {
    return (error as Error).message;
  }
  if (!NAME_RE.test(sample)) return 'logins may contain only letters, digits, "_" and "-", starting with a letter or "_"';
  const max = engine ? MAX_LENGTH[engine] : Math.min(...Object.values(MAX_LENGTH));
  if (sample.length > max) return `logins of this template can exceed ${max} characters`;
  return null;
}

/** A fresh login name for a lease of this role; throws Error with the reason when the template is unusable. */
export function newUsername(template: string | undefined, roleName: string, engine: Engine): string {
  const t = template ?? DEFAULT_USERNAME_TEMPLATE;
  const problem = checkUsernameTemplate(t, engine);
  if (problem) throw new Error(`username_template: ${problem}`);
  const name = render(t, { role: roleSlug(roleName), random: randomChars(16), unix_time: String(Math.floor(Date.now() / 1000)) });
  if (!NAME_RE.test(name) || name.length > MAX_LENGTH[engine]) throw new Error('username_template: the generated login is not a valid name');
  return name;
}

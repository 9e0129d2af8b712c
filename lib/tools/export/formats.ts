import { createCipheriv, createHmac, pbkdf2Sync, randomBytes, randomUUID } from 'node:crypto';

/**
 * Password-manager import formats (docs/api.md, "Exports", cites each):
 * - `json`: Bitwarden's JSON export/import format (bitwarden.com/help/condition-bitwarden-import/),
 *   unencrypted, or "password protected" (bitwarden.com/help/encrypted-export/): PBKDF2-SHA256
 *   of the password with the file's salt, stretched by HKDF-Expand into an AES-256-CBC key and
 *   an HMAC-SHA256 key, every encrypted value a type-2 EncString `2.<iv>|<ciphertext>|<mac>`.
 * - `keychain`: the CSV Apple Passwords (macOS 15+/iOS 18+, and Safari before) imports:
 *   `Title,URL,Username,Password,Notes,OTPAuth`.
 * - `credential-manager`: the CSV Chrome and Edge password managers import:
 *   `name,url,username,password,note`.
 */
export interface ExportEntry {
  readonly id: string;
  readonly type: string;
  readonly name: string;
  readonly username: string | null;
  readonly password: string | null;
  readonly url: string | null;
  readonly notes: string | null;
  /** A base32 TOTP secret, when the entry has one. */
  readonly totp: string | null;
  /** Every other field: public ones as text, secret ones hidden. */
  readonly fields: readonly { readonly name: string; readonly value: string; readonly hidden: boolean }[];
}

const bitwardenItem = (e: ExportEntry) => {
  const common = {
    id: e.id,
    organizationId: null,
    folderId: null,
    reprompt: 0,
    name: e.name,
    notes: e.notes,
    favorite: false,
    fields: e.fields.map((f) => ({ name: f.name, value: f.value, type: f.hidden ? 1 : 0, linkedId: null })),
    collectionIds: null,
  };
  return e.password !== null
    ? {
        ...common,
        type: 1,
        login: { uris: e.url ? [{ match: null, uri: e.url }] : [], username: e.username, password: e.password, totp: e.totp },
      }
    : { ...common, type: 2, secureNote: { type: 0 } };
};

export const bitwardenJson = (entries: readonly ExportEntry[]) => ({ encrypted: false, folders: [], items: entries.map(bitwardenItem) });

/** Bitwarden's iteration count for PBKDF2-SHA256 (its current default). */
const BITWARDEN_KDF_ITERATIONS = 600_000;

const hkdfExpand = (prk: Buffer, info: string) =>
  createHmac('sha256', prk)
    .update(Buffer.concat([Buffer.from(info), Buffer.from([1])]))
    .digest();

/** A type-2 EncString (AesCbc256_HmacSha256_B64). */
function encString(text: string, encKey: Buffer, macKey: Buffer): string {
  const iv = randomBytes(16);
  const cipher = createCipheriv('aes-256-cbc', encKey, iv);
  const ct = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  const mac = createHmac('sha256', macKey)
    .update(Buffer.concat([iv, ct]))
    .digest();
  return `2.${iv.toString('base64')}|${ct.toString('base64')}|${mac.toString('base64')}`;
}

/** Bitwarden's password-protected export of `plain` (the unencrypted JSON document). */
export function bitwardenProtected(plain: unknown, password: string, iterations = BITWARDEN_KDF_ITERATIONS) {
  const salt = randomBytes(16).toString('base64');
  const master = pbkdf2Sync(Buffer.from(password, 'utf8'), Buffer.from(salt, 'utf8'), iterations, 32, 'sha256');
  const [encKey, macKey] = [hkdfExpand(master, 'enc'), hkdfExpand(master, 'mac')];
  return {
    encrypted: true,
    passwordProtected: true,
    salt,
    kdfType: 0,
    kdfIterations: iterations,
    kdfMemory: null,
    kdfParallelism: null,
    encKeyValidation_DO_NOT_EDIT: encString(randomUUID(), encKey, macKey),
    data: encString(JSON.stringify(plain), encKey, macKey),
  };
}

/** RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled; CRLF line ends. */
const csvField = (v: string | null) => {
  const s = v ?? '';
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};
const csv = (header: readonly string[], rows: readonly (string | null)[][]) =>
  [header, ...rows].map((r) => r.map(csvField).join(',')).join('\r\n') + '\r\n';

const otpauth = (e: ExportEntry) =>
  e.totp ? `otpauth://totp/${encodeURIComponent(e.name)}${e.username ? `:${encodeURIComponent(e.username)}` : ''}?secret=${e.totp}` : null;

/** Logins only: the CSV formats have no place for other records. */
const logins = (entries: readonly ExportEntry[]) => entries.filter((e) => e.password !== null);

export const appleCsv = (entries: readonly ExportEntry[]) =>
  csv(
    ['Title', 'URL', 'Username', 'Password', 'Notes', 'OTPAuth'],
    logins(entries).map((e) => [e.name, e.url, e.username, e.password, e.notes, otpauth(e)]),
  );

export const chromeCsv = (entries: readonly ExportEntry[]) =>
  csv(
    ['name', 'url', 'username', 'password', 'note'],
    logins(entries).map((e) => [e.name, e.url, e.username, e.password, e.notes]),
  );

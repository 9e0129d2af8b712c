import { execFileSync } from 'node:child_process';
import { createDecipheriv, createHmac, pbkdf2Sync, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';
import { api, auditLogs, canary, errorCode, newAccount, type TestAccount } from '../helpers/api.js';
import { scaled } from '../helpers/timeouts.js';

/**
 * Exports for password managers, parsed against the published formats: Bitwarden's JSON
 * (a strict schema written from bitwarden.com/help/condition-bitwarden-import/, and the
 * password-protected variant decrypted as bitwarden.com/help/encrypted-export/ describes),
 * Apple Passwords' CSV and Chrome's CSV (csv-parse in strict mode, exact headers). No
 * Bitwarden importer runs offline here (the CLI imports into a server account).
 */
let acct: TestAccount;
let other: TestAccount;
const pw = canary('exp-pw');
const win = canary('exp-win');
const sec = canary('exp-secret');
const notes = canary('exp-notes');
const TOTP = 'JBSWY3DPEHPK3PXP';

/**
 * Opens an age file with the age command (the reference implementation, Debian's `age`),
 * which reads a passphrase from a terminal only: `script` gives it one, fed from stdin, so
 * the passphrase is on no command line. Its scrypt (work factor 2^18) is native: about 0.8
 * CPU-s, where typage's JavaScript scrypt took 15-20 CPU-s of the test worker.
 */
function ageDecrypt(armored: string, passphrase: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'export-age-'));
  try {
    writeFileSync(join(dir, 'in.age'), armored);
    execFileSync('script', ['-qec', `age --decrypt --output '${join(dir, 'out')}' '${join(dir, 'in.age')}'`, '/dev/null'], {
      input: `${passphrase}\n`,
      stdio: ['pipe', 'ignore', 'pipe'],
      timeout: scaled(30_000),
    });
    return readFileSync(join(dir, 'out'), 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const Uri = z.strictObject({ match: z.null(), uri: z.string() });
const Field = z.strictObject({ name: z.string(), value: z.string(), type: z.union([z.literal(0), z.literal(1)]), linkedId: z.null() });
const Common = {
  id: z.uuid(),
  organizationId: z.null(),
  folderId: z.null(),
  reprompt: z.literal(0),
  name: z.string().min(1),
  notes: z.string().nullable(),
  favorite: z.boolean(),
  fields: z.array(Field),
  collectionIds: z.null(),
};
const BitwardenJson = z.strictObject({
  encrypted: z.literal(false),
  folders: z.array(z.strictObject({ id: z.uuid(), name: z.string() })),
  items: z.array(
    z.discriminatedUnion('type', [
      z.strictObject({
        ...Common,
        type: z.literal(1),
        login: z.strictObject({ uris: z.array(Uri), username: z.string().nullable(), password: z.string(), totp: z.string().nullable() }),
      }),
      z.strictObject({ ...Common, type: z.literal(2), secureNote: z.strictObject({ type: z.literal(0) }) }),
    ]),
  ),
});
const EncString = z.string().regex(/^2\.[A-Za-z0-9+/=]+\|[A-Za-z0-9+/=]+\|[A-Za-z0-9+/=]+$/);
const BitwardenProtected = z.strictObject({
  encrypted: z.literal(true),
  passwordProtected: z.literal(true),
  salt: z.string().min(16),
  kdfType: z.literal(0),
  kdfIterations: z.number().int().min(600_000),
  kdfMemory: z.null(),
  kdfParallelism: z.null(),
  encKeyValidation_DO_NOT_EDIT: EncString,
  data: EncString,
});

/** Bitwarden's decryption: PBKDF2-SHA256 → HKDF-Expand("enc"/"mac") → verify HMAC(iv‖ct) → AES-256-CBC. */
function bitwardenDecrypt(doc: z.infer<typeof BitwardenProtected>, password: string, value: string): string {
  const master = pbkdf2Sync(password, doc.salt, doc.kdfIterations, 32, 'sha256');
  const expand = (info: string) => createHmac('sha256', master).update(`${info}\u0001`).digest();
  const [iv, ct, mac] = value
    .slice(2)
    .split('|')
    .map((p) => Buffer.from(p, 'base64')) as [Buffer, Buffer, Buffer];
  const want = createHmac('sha256', expand('mac'))
    .update(Buffer.concat([iv, ct]))
    .digest();
  if (!timingSafeEqual(want, mac)) throw new Error('MAC mismatch: wrong password');
  const d = createDecipheriv('aes-256-cbc', expand('enc'), iv);
  return Buffer.concat([d.update(ct), d.final()]).toString('utf8');
}

const csvRows = (text: string, header: string[]) => {
  const rows = parse(text, {
    bom: false,
    relax_quotes: false,
    relax_column_count: false,
    skip_empty_lines: false,
    record_delimiter: '\r\n',
  }) as string[][];
  expect(rows[0]).toEqual(header);
  return rows.slice(1).map((r) => Object.fromEntries(header.map((h, i) => [h, r[i]])));
};

beforeAll(async () => {
  [acct, other] = await Promise.all([newAccount('tools-export'), newAccount('tools-export-other')]);
  const made = await Promise.all([
    api('POST', '/api/v1/passwords', {
      key: acct.adminKey,
      body: { name: 'Mail, "work"', username: 'alice', password: pw, url: 'https://mail.example.test/login', notes, totp_secret: TOTP },
    }),
    api('POST', '/api/v1/windows-credentials', {
      key: acct.adminKey,
      body: { name: 'fileserver', target: 'fileserver.corp.example.test', domain: 'CORP', username: 'alice', password: win },
    }),
    api('POST', '/api/v1/secrets', { key: acct.adminKey, body: { name: 'api-config', description: 'service config', data: { token: sec } } }),
    api('POST', '/api/v1/passwords', { key: other.adminKey, body: { name: 'other', password: canary('other-pw') } }),
  ]);
  for (const m of made) expect(m.status, m.text).toBe(201);
});

describe('exports', () => {
  it('json: a Bitwarden JSON document of every type the caller may read', async () => {
    const res = await api('POST', '/api/v1/export/json', { key: acct.adminKey, body: {} });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ format: 'json', encrypted: false, count: 3, skipped_types: [], file: { name: 'bitwarden_export.json' } });
    const doc = BitwardenJson.parse(JSON.parse(res.body.data.file.content));
    const mail = doc.items.find((i) => i.name === 'Mail, "work"');
    expect(mail).toMatchObject({
      type: 1,
      notes,
      login: { username: 'alice', password: pw, totp: TOTP, uris: [{ match: null, uri: 'https://mail.example.test/login' }] },
    });
    const fs = doc.items.find((i) => i.name === 'fileserver');
    expect(fs).toMatchObject({ type: 1, login: { username: 'alice', password: win } });
    expect(fs?.fields).toEqual(expect.arrayContaining([{ name: 'domain', value: 'CORP', type: 0, linkedId: null }]));
    const note = doc.items.find((i) => i.name === 'api-config');
    expect(note).toMatchObject({ type: 2, notes: 'service config', fields: [{ name: 'token', value: sec, type: 1, linkedId: null }] });
    expect(res.text).not.toContain('other-pw');
  });

  it('json with a passphrase: Bitwarden password-protected export, opened as Bitwarden does', async () => {
    const passphrase = canary('exp-pass');
    const res = await api('POST', '/api/v1/export/json', { key: acct.adminKey, body: { passphrase, types: ['password'] } });
    expect(res.status, res.text).toBe(200);
    const doc = BitwardenProtected.parse(JSON.parse(res.body.data.file.content));
    expect(res.text).not.toContain(pw);
    expect(bitwardenDecrypt(doc, passphrase, doc.encKeyValidation_DO_NOT_EDIT)).toMatch(/^[0-9a-f-]{36}$/);
    const plain = BitwardenJson.parse(JSON.parse(bitwardenDecrypt(doc, passphrase, doc.data)));
    expect(plain.items.map((i) => i.name)).toEqual(['Mail, "work"']);
    expect(() => bitwardenDecrypt(doc, 'not the passphrase', doc.data)).toThrow('MAC mismatch');
  });

  it('keychain: the Apple Passwords CSV (Title,URL,Username,Password,Notes,OTPAuth), logins only', async () => {
    const res = await api('POST', '/api/v1/export/keychain', { key: acct.adminKey, body: {} });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ count: 2, file: { name: 'passwords.csv', content_type: 'text/csv' } });
    const rows = csvRows(res.body.data.file.content, ['Title', 'URL', 'Username', 'Password', 'Notes', 'OTPAuth']);
    expect(rows).toHaveLength(2);
    expect(rows).toContainEqual({
      Title: 'Mail, "work"',
      URL: 'https://mail.example.test/login',
      Username: 'alice',
      Password: pw,
      Notes: notes,
      OTPAuth: `otpauth://totp/${encodeURIComponent('Mail, "work"')}:alice?secret=${TOTP}`,
    });
  });

  it('credential-manager: the Chrome/Edge CSV (name,url,username,password,note); with a passphrase an age file', async () => {
    const res = await api('POST', '/api/v1/export/credential-manager', { key: acct.adminKey, body: { types: ['password', 'windows_credential'] } });
    const rows = csvRows(res.body.data.file.content, ['name', 'url', 'username', 'password', 'note']);
    expect(rows).toContainEqual({ name: 'fileserver', url: '', username: 'alice', password: win, note: '' });
    const passphrase = canary('exp-age');
    const enc = await api('POST', '/api/v1/export/credential-manager', { key: acct.adminKey, body: { passphrase } });
    expect(enc.body.data).toMatchObject({ encrypted: true, file: { name: 'passwords.csv.age', content_type: 'application/x-age' } });
    expect(enc.body.data.file.content).toMatch(/^-----BEGIN AGE ENCRYPTED FILE-----/);
    const csv = ageDecrypt(enc.body.data.file.content, passphrase);
    expect(csvRows(csv, ['name', 'url', 'username', 'password', 'note'])).toHaveLength(2);
    expect(() => ageDecrypt(enc.body.data.file.content, `${passphrase}-wrong`)).toThrow();
  });

  it('only what the caller may read: types without their read scope are skipped and named', async () => {
    const key = await acct.key(['export:read', 'passwords:read']);
    const res = await api('POST', '/api/v1/export/json', { key, body: {} });
    expect(res.status).toBe(200);
    expect(res.body.data.count).toBe(1);
    expect(res.body.data.skipped_types).toEqual(
      expect.arrayContaining([
        { type: 'secret', needs: ['secrets:read'] },
        { type: 'windows_credential', needs: ['credentials:read'] },
      ]),
    );
    expect(res.text).not.toContain(win);
    expect(res.text).not.toContain(sec);
    const none = await api('POST', '/api/v1/export/keychain', { key: await acct.key(['export:read']), body: {} });
    expect(none.body.data.count).toBe(0);
    expect(none.body.data.file.content).toBe('Title,URL,Username,Password,Notes,OTPAuth\r\n');
  });

  it('is audited (counts, never values)', async () => {
    // the export routes are read-only: their entries are written by the audit writer (lib/audit/queue.ts)
    const entries = await auditLogs(
      acct.adminKey,
      'action=export.*&limit=50',
      (found) =>
        [2, 0].every((n) => found.some((e) => e.action === 'export.keychain' && e.detail?.count === n)) &&
        found.some((e) => e.action === 'export.json' && e.detail?.encrypted === true),
    );
    expect(entries.find((e) => e.action === 'export.json' && e.detail?.encrypted === true)?.detail).toMatchObject({
      count: 1,
      types: { password: 1 },
    });
    expect(entries.filter((e) => e.action === 'export.keychain').map((e) => e.detail?.count)).toEqual(expect.arrayContaining([2, 0]));
    expect(JSON.stringify(entries)).not.toContain(pw);
  });

  it('400, 401, 403', async () => {
    for (const body of [{ passphrase: 'short' }, { types: ['ssh_key'] }, { types: [] }, { extra: 1 }]) {
      const res = await api('POST', '/api/v1/export/json', { key: acct.adminKey, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(errorCode(res)).toBe('validation_failed');
    }
    expect((await api('POST', '/api/v1/export/keychain', { body: {} })).status).toBe(401);
    const noExport = await acct.key(['passwords:read', 'secrets:read', 'credentials:read']);
    for (const f of ['json', 'keychain', 'credential-manager']) {
      expect(errorCode(await api('POST', `/api/v1/export/${f}`, { key: noExport, body: {} }))).toBe('insufficient_scope');
    }
  });
});

import { createCipheriv, randomBytes, scrypt } from 'node:crypto';
import { Encrypter, type Recipient, Stanza, armor } from 'age-encryption';
import * as z from 'zod/v4';
import { hasScope } from '../../auth/scopes.js';
import type { CallContext } from '../../auth/principal.js';
import { recordAudit } from '../../audit/audit.js';
import { CATALOG, type CatalogEntry } from '../../catalog.js';
import { badRequest } from '../../core/errors.js';
import { keys } from '../../store/keys.js';
import { queryAll } from '../../store/pagination.js';
import { openSecret, toRecord } from '../../resources/store.js';
import { appleCsv, bitwardenJson, bitwardenProtected, chromeCsv, type ExportEntry } from './formats.js';

/**
 * Exports of the credentials a caller may read, in formats password managers import
 * (formats.ts). Which types: passwords, generic secrets and the typed credential collections
 * without key material (keys leave only through their own export routes); each type only
 * when the caller holds its read scopes in the catalogue (others are listed as skipped).
 * Every export is audited (format, counts per type; never values). With a passphrase, the
 * JSON export is Bitwarden's password-protected format, the CSVs an age file (scrypt
 * passphrase recipient, ASCII-armoured; `age -d` opens it).
 */
const EXPORT_FORMATS = ['json', 'keychain', 'credential-manager'] as const;
type ExportFormat = (typeof EXPORT_FORMATS)[number];

const EXPORTABLE: readonly CatalogEntry[] = Object.values(CATALOG).filter(
  (e: CatalogEntry) => !e.key && (e.family === 'credentials' || e.type === 'password' || e.type === 'secret'),
);
const MAX_ITEMS = 5000;

export const ExportBody = z.strictObject({
  /** Encrypts the file (see above); at least 12 characters. */
  passphrase: z.string().min(12).max(1024).optional(),
  /** Only these types (catalogue names, e.g. password, windows_credential); default: all the caller may read. */
  types: z
    .array(z.enum(EXPORTABLE.map((e) => e.type) as [string, ...string[]]))
    .min(1)
    .max(50)
    .optional(),
});
export type ExportBody = z.infer<typeof ExportBody>;

const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);
const URL_FIELDS = ['url', 'profile_url', 'login_url', 'portal_url'];

function toEntry(type: string, id: string, name: string, meta: Record<string, unknown>, secret: Record<string, unknown>): ExportEntry {
  const all = { ...meta, ...secret };
  const used = new Set(['username', 'password', 'notes', 'totp_secret', ...URL_FIELDS]);
  const url = URL_FIELDS.map((f) => str(all[f])).find((u) => u !== null) ?? (str(meta.hostname) ? `ssh://${String(meta.hostname)}` : null);
  const fields = Object.entries(all)
    .filter(([k, v]) => !used.has(k) && v !== undefined && v !== null && k !== 'description' && k !== 'tags')
    .map(([k, v]) => ({ name: k, value: typeof v === 'string' ? v : JSON.stringify(v), hidden: k in secret }));
  return {
    id,
    type,
    name,
    username: str(all.username),
    password: str(secret.password),
    url: type === 'secret' ? null : url,
    notes: str(secret.notes) ?? str(meta.description),
    totp: str(secret.totp_secret),
    fields,
  };
}

async function collect(ctx: CallContext, types: readonly CatalogEntry[]): Promise<ExportEntry[]> {
  const tenantId = ctx.principal.tenantId;
  const out: ExportEntry[] = [];
  for (const t of types) {
    const items = await queryAll({ pk: keys.tenant(tenantId).pk, sk: { prefix: keys.headPrefix(t.type) } });
    if (out.length + items.length > MAX_ITEMS) {
      throw badRequest(`more than ${MAX_ITEMS} records to export: export fewer types at a time`, [
        { path: 'body.types', message: 'too many records' },
      ]);
    }
    for (const item of items) {
      const rec = toRecord<Record<string, unknown>>(item);
      const secret = (await openSecret<Record<string, unknown>>(tenantId, rec, item.value as Uint8Array | undefined)) ?? {};
      // a generic secret's sealed part is its `data` map: its fields become hidden fields (a `password` field a login)
      out.push(toEntry(t.type, rec.id, rec.name, rec.meta, secret));
    }
  }
  return out;
}

/** age's scrypt work factor (the age CLI's and typage's default): 2^18, 256 MiB of memory. */
const AGE_SCRYPT_LOG_N = 18;

/**
 * age's passphrase recipient (the `scrypt` stanza of the age v1 format) on node's native
 * scrypt, off the event loop: typage's own passphrase recipient runs scrypt in JavaScript,
 * which took over a minute per export on a loaded 2-core machine. The file key is wrapped
 * with ChaCha20-Poly1305 under scrypt(passphrase, "age-encryption.org/v1/scrypt" || salt),
 * zero nonce, as the format specifies; any age implementation opens it with the passphrase.
 */
function scryptRecipient(passphrase: string): Recipient {
  return {
    async wrapFileKey(fileKey: Uint8Array): Promise<Stanza[]> {
      const salt = randomBytes(16);
      const key = await new Promise<Buffer>((resolve, reject) =>
        scrypt(
          Buffer.from(passphrase, 'utf8'),
          Buffer.concat([Buffer.from('age-encryption.org/v1/scrypt'), salt]),
          32,
          { N: 2 ** AGE_SCRYPT_LOG_N, r: 8, p: 1, maxmem: 2 ** 29 },
          (error, derived) => (error ? reject(error) : resolve(derived)),
        ),
      );
      const cipher = createCipheriv('chacha20-poly1305', key, Buffer.alloc(12), { authTagLength: 16 });
      const body = Buffer.concat([cipher.update(fileKey), cipher.final(), cipher.getAuthTag()]);
      return [new Stanza(['scrypt', salt.toString('base64').replace(/=+$/, ''), String(AGE_SCRYPT_LOG_N)], body)];
    },
  };
}

async function ageEncrypt(text: string, passphrase: string): Promise<string> {
  const e = new Encrypter();
  e.addRecipient(scryptRecipient(passphrase));
  return armor.encode(await e.encrypt(text));
}

const FILES: Record<ExportFormat, { name: string; type: string }> = {
  json: { name: 'bitwarden_export.json', type: 'application/json' },
  keychain: { name: 'passwords.csv', type: 'text/csv' },
  'credential-manager': { name: 'passwords.csv', type: 'text/csv' },
};

export async function exportCredentials(ctx: CallContext, format: ExportFormat, body: ExportBody) {
  const wanted = body.types ? EXPORTABLE.filter((e) => body.types!.includes(e.type)) : EXPORTABLE;
  const allowed = wanted.filter((e) => e.scopes.read.every((s) => hasScope(ctx.principal.scopes, s)));
  const skipped = wanted.filter((e) => !allowed.includes(e)).map((e) => ({ type: e.type, needs: e.scopes.read }));
  const entries = await collect(ctx, allowed);
  let content: string;
  if (format === 'json') {
    const doc = bitwardenJson(entries);
    content = JSON.stringify(body.passphrase ? bitwardenProtected(doc, body.passphrase) : doc, null, 2);
  } else {
    const csv = format === 'keychain' ? appleCsv(entries) : chromeCsv(entries);
    content = body.passphrase ? await ageEncrypt(csv, body.passphrase) : csv;
  }
  const exported = format === 'json' ? entries : entries.filter((e) => e.password !== null);
  const counts: Record<string, number> = {};
  for (const e of exported) counts[e.type] = (counts[e.type] ?? 0) + 1;
  await recordAudit(ctx, ctx.principal.tenantId, {
    action: `export.${format}`,
    resource: { type: 'export', id: ctx.requestId },
    detail: { count: exported.length, types: counts, encrypted: body.passphrase !== undefined, skipped_types: skipped.map((s) => s.type) },
  });
  const file = FILES[format];
  const encryptedCsv = body.passphrase !== undefined && format !== 'json';
  return {
    format,
    encrypted: body.passphrase !== undefined,
    count: exported.length,
    types: counts,
    skipped_types: skipped,
    file: {
      name: encryptedCsv ? `${file.name}.age` : file.name,
      content_type: encryptedCsv ? 'application/x-age' : file.type,
      content,
    },
  };
}

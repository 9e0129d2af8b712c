import { createPublicKey } from 'node:crypto';
import * as z from 'zod/v4';
import { parsePrivateKeyPem, privatePkcs8Pem } from '../../pki/keys.js';
import { certPem, certPublicKey, parseCertificates, sha256Hex } from '../../pki/x509.js';
import { CertificatePem, PrivateKeyPem, Secret } from '../fields.js';
import { Problems, type TypeSpec } from '../model.js';

/**
 * Java keystores: private-key entries (key + certificate chain) and trusted-certificate
 * entries under aliases, a store password, exported as PKCS#12 (lib/pki/pkcs12.ts) that
 * `keytool -list` reads. Stored: each entry's public part (certificates and their facts)
 * in metadata, the private keys (PKCS#8) and the store password sealed. The private keys
 * leave only through GET /{id}/export (export:read), never through GET /{id}.
 */
export const Alias = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z0-9][a-z0-9._@-]{0,63}$/, 'letters, digits, ".", "_", "@", "-" (Java keeps PKCS#12 aliases in lower case)')
  // as sent: trimmed and lower-cased before the pattern applies
  .meta({ pattern: '^\\s*[A-Za-z0-9][A-Za-z0-9._@-]{0,63}\\s*$' });

export const EntryInput = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('private-key'),
    alias: Alias,
    private_key: PrivateKeyPem,
    private_key_passphrase: Secret(1024).optional(),
    certificate_chain: CertificatePem.describe("PEM certificates, the key's own first"),
  }),
  z.strictObject({ kind: z.literal('trusted-certificate'), alias: Alias, certificate: CertificatePem }),
]);
export type EntryInput = z.infer<typeof EntryInput>;

export interface StoredEntry {
  readonly alias: string;
  readonly kind: 'private-key' | 'trusted-certificate';
  readonly certificate_chain: string[];
  readonly subject: string;
  readonly issuer: string;
  readonly serial_number: string;
  readonly not_before: string;
  readonly not_after: string;
  readonly fingerprint_sha256: string;
  readonly key_algorithm: string;
}

/** An entry as the API shows it (`StoredEntry`): its certificates and the leaf's facts, never its private key. */
const ShownEntry = z.strictObject({
  alias: z.string(),
  kind: z.enum(['private-key', 'trusted-certificate']),
  certificate_chain: z.array(z.string()).describe('PEM certificates, the leaf first.'),
  subject: z.string(),
  issuer: z.string(),
  serial_number: z.string(),
  not_before: z.iso.datetime({ offset: true }),
  not_after: z.iso.datetime({ offset: true }),
  fingerprint_sha256: z.string().regex(/^[0-9a-f]{64}$/),
  key_algorithm: z.string().describe('The leaf key’s algorithm (RSA, EC, ED25519).'),
});

/** Parses an entry: the certificates, and for a key entry the key, which must match the first certificate. */
export function toStoredEntry(input: EntryInput, at = 'body'): { entry: StoredEntry; privateKey?: string } {
  const certs = parseCertificates(input.kind === 'private-key' ? input.certificate_chain : input.certificate);
  const p = new Problems();
  p.check(certs.length > 0, input.kind === 'private-key' ? `${at}.certificate_chain` : `${at}.certificate`, 'no certificate found').throwIfAny();
  const leaf = certs[0]!;
  const leafKey = certPublicKey(leaf);
  let privateKey: string | undefined;
  if (input.kind === 'private-key') {
    const key = parsePrivateKeyPem(input.private_key, input.private_key_passphrase);
    const spki = createPublicKey(key).export({ type: 'spki', format: 'der' });
    p.check(
      spki.equals(leafKey.export({ type: 'spki', format: 'der' })),
      `${at}.certificate_chain`,
      'the first certificate does not belong to the private key',
    ).throwIfAny();
    privateKey = privatePkcs8Pem(key);
  } else {
    p.check(certs.length === 1, `${at}.certificate`, 'a trusted-certificate entry holds exactly one certificate').throwIfAny();
  }
  return {
    entry: {
      alias: input.alias,
      kind: input.kind,
      certificate_chain: certs.map(certPem),
      subject: leaf.subject,
      issuer: leaf.issuer,
      serial_number: leaf.serialNumber,
      not_before: leaf.notBefore.toISOString(),
      not_after: leaf.notAfter.toISOString(),
      fingerprint_sha256: sha256Hex(leaf.rawData),
      key_algorithm: String(leafKey.asymmetricKeyType).toUpperCase(),
    },
    ...(privateKey ? { privateKey } : {}),
  };
}

/**
 * The keystore format. PKCS#12 only: it has been Java's default keystore type since Java 9
 * (JEP 229), keytool and every JVM read it, and unlike JKS it is an open standard
 * (RFC 7292). No well-kept JavaScript library writes the proprietary JKS format, so
 * `store_type: "jks"` is refused with a sentence saying so and how to convert.
 */
const StoreType = z
  .string()
  .default('pkcs12')
  .superRefine((t, ctx) => {
    if (t === 'pkcs12') return;
    ctx.addIssue({
      code: 'custom',
      message:
        t === 'jks'
          ? 'JKS is not produced: keystores are PKCS#12, the default keystore type of Java 9 and later, which keytool and every JVM read; for a legacy tool that needs JKS, convert the export with keytool -importkeystore -srcstoretype PKCS12 -deststoretype JKS'
          : 'store_type must be "pkcs12"',
    });
  })
  // the description says what the refinement does: pkcs12 is the one value
  .meta({ enum: ['pkcs12'] })
  .transform(() => 'pkcs12' as const);

const earliest = (entries: readonly StoredEntry[]) => (entries.length ? entries.map((e) => e.not_after).sort()[0] : undefined);

export const jksKeystore: TypeSpec = {
  type: 'jks_keystore',
  summary: 'A Java keystore: private-key and trusted-certificate entries, exported as PKCS#12 for keytool.',
  createErrors: ['invalid_key', 'passphrase_required', 'wrong_passphrase'],
  fields: z.strictObject({
    store_type: StoreType,
    store_password: Secret(128).min(6, 'keytool needs at least 6 characters'),
    entries: z.array(EntryInput).max(100).default([]),
  }),
  secret: ['store_password', 'private_keys'],
  update: 'merge',
  updateFields: z.strictObject({ store_password: Secret(128).min(6, 'keytool needs at least 6 characters') }),
  updateSemantics:
    'Partial update like generic secrets: name, description, tags and store_password change when given, everything else is kept; entries change through /entries. GET returns an ETag; If-Match on PUT, POST /entries and DELETE /entries/{alias} makes them conditional (stale → 409, missing → 412).',
  expires: 'expires_at',
  shown: {
    entries: z.array(ShownEntry),
    expires_at: z.iso.datetime({ offset: true }).describe('The earliest `not_after` of the entries.'),
  },
  prepare(_ctx, f, current) {
    if (current !== undefined) return { ...f, expires_at: earliest(f.entries as StoredEntry[]) };
    const entries: StoredEntry[] = [];
    const privateKeys: Record<string, string> = {};
    (f.entries as EntryInput[]).forEach((input, i) => {
      new Problems().check(!entries.some((e) => e.alias === input.alias), `entries.${i}.alias`, 'duplicate alias').throwIfAny();
      const { entry, privateKey } = toStoredEntry(input, `body.entries.${i}`);
      entries.push(entry);
      if (privateKey) privateKeys[entry.alias] = privateKey;
    });
    return { store_type: f.store_type, store_password: f.store_password, entries, private_keys: privateKeys, expires_at: earliest(entries) };
  },
};

/* Responses of the keystore's own routes (functions/credentials/jks-keystores.ts). */
export const JksEntries = z.strictObject({ entries: z.array(ShownEntry), total: z.int().min(0) });
export const JksEntryAdded = z.strictObject({ entry: ShownEntry, version: z.int().min(1).describe('The keystore’s new version.') });
export const JksEntryRemoved = z.strictObject({ deleted: z.literal(true), alias: z.string(), version: z.int().min(1) });
export const JksExport = z.strictObject({
  id: z.uuid(),
  format: z.literal('pkcs12'),
  filename: z.string().describe('A file name for the keystore (`<name>.p12`).'),
  entries: z.int().min(0).describe('How many entries the keystore holds.'),
  keystore_base64: z.string().describe('The PKCS#12 keystore, protected by the store password, in base64.'),
});

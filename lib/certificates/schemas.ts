import * as z from 'zod/v4';
import { Description, DnsName, Email, KeyName, KeyText, Tags } from '../keys/schemas.js';
import { EXTENDED_KEY_USAGES, KEY_USAGES } from '../pki/x509.js';
import { REVOCATION_REASONS } from './ca.js';

const DnText = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[^\r\n\0]*$/, 'one line');

export const Subject = z.strictObject({
  common_name: DnText.optional(),
  organization: DnText.optional(),
  organizational_unit: DnText.optional(),
  locality: DnText.optional(),
  state: DnText.optional(),
  country: z
    .string()
    .regex(/^[A-Z]{2}$/, 'two upper-case letters (ISO 3166)')
    .optional(),
});
export type Subject = z.infer<typeof Subject>;

export const Sans = z.strictObject({
  dns: z.array(DnsName).max(100).optional(),
  ip: z
    .array(z.union([z.ipv4(), z.ipv6()]))
    .max(100)
    .optional(),
  email: z.array(Email).max(100).optional(),
  uri: z.array(z.url().max(2048)).max(100).optional(),
});
export type Sans = z.infer<typeof Sans>;

const CERT_KEY_ALGORITHMS = ['rsa-2048', 'rsa-3072', 'rsa-4096', 'ec-p256', 'ec-p384', 'ed25519'] as const;
export const CertKeyAlgorithm = z.enum(CERT_KEY_ALGORITHMS);
export type CertKeyAlgorithm = z.infer<typeof CertKeyAlgorithm>;

export const KeyUsage = z.enum(Object.keys(KEY_USAGES) as [keyof typeof KEY_USAGES, ...(keyof typeof KEY_USAGES)[]]);
export const ExtendedKeyUsage = z.enum(
  Object.keys(EXTENDED_KEY_USAGES) as [keyof typeof EXTENDED_KEY_USAGES, ...(keyof typeof EXTENDED_KEY_USAGES)[]],
);

const MAX_VALIDITY_DAYS = 825;

const AcmeOptions = z.strictObject({
  directory_url: z.url().max(2048),
  email: Email.optional(),
  /** PEM bundle trusted for the directory's TLS (a private ACME CA); default: the system CAs. */
  directory_ca_pem: KeyText.optional(),
});

export const EnrollBody = z
  .strictObject({
    name: KeyName,
    /** Issue for the key of this PKCS#10 request (PEM); otherwise a key is generated. */
    csr: KeyText.optional(),
    key_algorithm: CertKeyAlgorithm.optional(),
    subject: Subject.optional(),
    sans: Sans.optional(),
    key_usage: z.array(KeyUsage).min(1).max(5).optional(),
    extended_key_usage: z.array(ExtendedKeyUsage).min(1).max(5).optional(),
    validity_days: z.number().int().min(1).max(MAX_VALIDITY_DAYS).optional(),
    not_before: z.iso.datetime().optional(),
    /** Obtain the certificate from an external ACME directory (http-01) instead of the account CA. */
    acme: AcmeOptions.optional(),
    description: Description.optional(),
    tags: Tags.optional(),
  })
  .refine((b) => !(b.csr && b.key_algorithm), { message: 'key_algorithm applies when no csr is sent', path: ['key_algorithm'] })
  .refine(
    (b) =>
      !b.acme || (b.validity_days === undefined && b.not_before === undefined && b.key_usage === undefined && b.extended_key_usage === undefined),
    {
      message: 'validity and key usages of an ACME certificate are set by the ACME directory',
      path: ['acme'],
    },
  );
export type EnrollBody = z.infer<typeof EnrollBody>;

export const RenewBody = z
  .strictObject({
    /** Keep the current key (default for certificates issued from a CSR); false generates a new one. */
    reuse_key: z.boolean().optional(),
    /** A new PKCS#10 request for the renewed certificate. */
    csr: KeyText.optional(),
    key_algorithm: CertKeyAlgorithm.optional(),
    validity_days: z.number().int().min(1).max(MAX_VALIDITY_DAYS).optional(),
  })
  .refine((b) => !(b.csr && (b.reuse_key !== undefined || b.key_algorithm)), { message: 'csr excludes reuse_key and key_algorithm', path: ['csr'] })
  .refine((b) => !(b.reuse_key === true && b.key_algorithm), { message: 'key_algorithm applies to a new key only', path: ['key_algorithm'] });
export type RenewBody = z.infer<typeof RenewBody>;

export const RevokeBody = z.strictObject({
  reason: z.enum(Object.keys(REVOCATION_REASONS) as [keyof typeof REVOCATION_REASONS, ...(keyof typeof REVOCATION_REASONS)[]]).default('unspecified'),
});
export type RevokeBody = z.infer<typeof RevokeBody>;

const DOWNLOAD_FORMATS = ['pem', 'der', 'chain', 'crl', 'key', 'pkcs12'] as const;
export const DownloadFormat = z.enum(DOWNLOAD_FORMATS);
export type DownloadFormat = z.infer<typeof DownloadFormat>;

export const DownloadQuery = z.strictObject({ format: DownloadFormat.default('pem') });

/** PKCS#12 passwords are printable ASCII: Java's PKCS#12 reader refuses anything else. */
export const Pkcs12Password = z
  .string()
  .min(8)
  .max(128)
  .regex(/^[\x20-\x7e]+$/, 'printable ASCII characters only');

export const DownloadBody = z
  .strictObject({
    format: DownloadFormat.default('pkcs12'),
    password: Pkcs12Password.optional(),
    include_chain: z.boolean().default(true),
    friendly_name: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[^\r\n\0]*$/)
      .optional(),
  })
  .refine((b) => b.format !== 'pkcs12' || b.password !== undefined, { message: 'a PKCS#12 export needs a password', path: ['password'] })
  .refine((b) => b.format === 'pkcs12' || (b.password === undefined && b.friendly_name === undefined), {
    message: 'password and friendly_name apply to pkcs12 only',
    path: ['password'],
  });
export type DownloadBody = z.infer<typeof DownloadBody>;

import * as z from 'zod/v4';
import { Description, DnsName, Email, KEY_BASE, KeyName, KeyText, Tags } from '../keys/schemas.js';
import { crossFieldRule, ListPage, Timestamp } from '../schemas.js';
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

export const EnrollBody = crossFieldRule(
  crossFieldRule(
    z.strictObject({
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
    }),
    (b) => !(b.csr && b.key_algorithm),
    { not: { required: ['csr', 'key_algorithm'] } },
    'key_algorithm applies when no csr is sent',
    'key_algorithm',
  ),
  (b) => !b.acme || (b.validity_days === undefined && b.not_before === undefined && b.key_usage === undefined && b.extended_key_usage === undefined),
  { not: { required: ['acme'], anyOf: ['validity_days', 'not_before', 'key_usage', 'extended_key_usage'].map((k) => ({ required: [k] })) } },
  'validity and key usages of an ACME certificate are set by the ACME directory',
  'acme',
);
export type EnrollBody = z.infer<typeof EnrollBody>;

export const RenewBody = crossFieldRule(
  crossFieldRule(
    z.strictObject({
      /** Keep the current key (default for certificates issued from a CSR); false generates a new one. */
      reuse_key: z.boolean().optional(),
      /** A new PKCS#10 request for the renewed certificate. */
      csr: KeyText.optional(),
      key_algorithm: CertKeyAlgorithm.optional(),
      validity_days: z.number().int().min(1).max(MAX_VALIDITY_DAYS).optional(),
    }),
    (b) => !(b.csr && (b.reuse_key !== undefined || b.key_algorithm)),
    { not: { required: ['csr'], anyOf: [{ required: ['reuse_key'] }, { required: ['key_algorithm'] }] } },
    'csr excludes reuse_key and key_algorithm',
    'csr',
  ),
  (b) => !(b.reuse_key === true && b.key_algorithm),
  { not: { required: ['reuse_key', 'key_algorithm'], properties: { reuse_key: { const: true } } } },
  'key_algorithm applies to a new key only',
  'key_algorithm',
);
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

export const DownloadBody = crossFieldRule(
  crossFieldRule(
    z.strictObject({
      format: DownloadFormat.default('pkcs12'),
      password: Pkcs12Password.optional(),
      include_chain: z.boolean().default(true),
      friendly_name: z
        .string()
        .min(1)
        .max(64)
        .regex(/^[^\r\n\0]*$/)
        .optional(),
    }),
    (b) => b.format !== 'pkcs12' || b.password !== undefined,
    // format defaults to pkcs12: absent or pkcs12, a password is required
    { anyOf: [{ required: ['password'] }, { required: ['format'], properties: { format: { not: { const: 'pkcs12' } } } }] },
    'a PKCS#12 export needs a password',
    'password',
  ),
  (b) => b.format === 'pkcs12' || (b.password === undefined && b.friendly_name === undefined),
  {
    not: {
      required: ['format'],
      properties: { format: { not: { const: 'pkcs12' } } },
      anyOf: [{ required: ['password'] }, { required: ['friendly_name'] }],
    },
  },
  'password and friendly_name apply to pkcs12 only',
  'password',
);
export type DownloadBody = z.infer<typeof DownloadBody>;

/* Responses (lib/http/define-handler.ts `HandlerDoc`): what the certificate routes answer. */

const CaCertInfo = z.strictObject({
  certificate_pem: z.string(),
  subject: z.string(),
  serial_number: z.string().describe('Lower-case hex.'),
  not_before: Timestamp,
  not_after: Timestamp,
  fingerprint: z.string().describe('SHA-256 of the certificate’s DER (hex).'),
});

/** The account CA (lib/certificates/ca.ts `caView`): a root and the intermediate that issues. */
const CertificateAuthority = z
  .strictObject({
    id: z.uuid().describe('The CA’s id: `{id}` of GET /api/v1/certificates/{id} and its downloads (root, chain, CRL).'),
    type: z.string(),
    name: z.string(),
    algorithm: z.string(),
    bits: z.int(),
    curve: z.string(),
    fingerprint: z.string().describe('SHA-256 of the intermediate certificate (hex).'),
    public_key: z.string().describe('The intermediate’s public key, PEM (SPKI).'),
    expires_at: Timestamp,
    has_private_key: z.literal(false).describe('The CA keys never leave the service.'),
    source: z.literal('generated'),
    description: z.string(),
    tags: z.array(z.string()),
    root: CaCertInfo,
    intermediate: CaCertInfo,
    chain_pem: z.string().describe('Intermediate, then root, PEM.'),
    version: z.int().min(1),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .describe('The account’s private CA.');

const EarlierSerial = z.strictObject({
  serial_number: z.string(),
  not_after: Timestamp,
  ca_id: z.uuid().nullable(),
  certificate_pem: z.string().optional(),
});

/** A managed certificate (lib/certificates/service.ts `certView`). */
export const Certificate = z
  .strictObject({
    ...KEY_BASE,
    type: z.literal('certificate'),
    fingerprint: z.string().describe('SHA-256 of the certificate’s DER (hex).'),
    public_key: z.string().describe('The certified public key, PEM (SPKI).'),
    public_key_fingerprint: z.string().describe('SHA-256 of the SubjectPublicKeyInfo (hex).'),
    expires_at: Timestamp,
    serial_number: z.string().describe('The current serial, lower-case hex.'),
    subject: z.string(),
    common_name: z.string().nullable(),
    issuer: z.string(),
    sans: z.strictObject({ dns: z.array(z.string()), ip: z.array(z.string()), email: z.array(z.string()), uri: z.array(z.string()) }),
    key_usage: z.array(KeyUsage),
    extended_key_usage: z.array(z.string()).describe('Names, or OIDs for usages without one.'),
    not_before: Timestamp,
    not_after: Timestamp,
    status: z.enum(['active', 'revoked', 'expired']).describe('`expired` once past `not_after`.'),
    days_until_expiry: z.int().describe('Whole days until `not_after` (negative once expired).'),
    revoked_at: Timestamp.nullable(),
    revocation_reason: z.string().nullable(),
    certificate_pem: z.string(),
    chain_pem: z.string().describe('The issuing chain without the certificate (intermediate, then root), PEM.'),
    ca_id: z.uuid().nullable().describe('The account CA that issued it; null for an ACME certificate.'),
    csr_pem: z.string().nullable().describe('The request of a certificate issued for a CSR.'),
    acme: z
      .strictObject({ directory_url: z.string(), email: z.string().optional(), directory_ca_pem: z.string().optional() })
      .nullable()
      .describe('The ACME directory of an ACME certificate; null otherwise.'),
    validity_days: z.int().nullable(),
    earlier_serials: z.array(EarlierSerial).optional().describe('The unexpired serials of earlier versions (renewals); revoking revokes them too.'),
  })
  .describe('A certificate issued by the account CA or obtained from an ACME directory.');

export const CertificateAnswer = z.strictObject({ certificate: Certificate });
/** GET /api/v1/certificates/{id}: a certificate, or the account CA when `{id}` is its id. */
export const CertificateOrCa = z.union([CertificateAnswer, z.strictObject({ certificate_authority: CertificateAuthority })]);
export const CertificateList = ListPage('certificates', Certificate, { paged: true, describe: 'The certificates of this page.' }).extend({
  certificate_authority: CertificateAuthority.nullable().describe('The account CA; null until the first certificate is issued.'),
});

export const CertificateDownload = z.strictObject({
  download: z.strictObject({
    format: DownloadFormat,
    filename: z.string(),
    content_type: z.enum(['application/x-pem-file', 'application/pkix-cert', 'application/pkix-crl', 'application/x-pkcs12']),
    encoding: z.enum(['text', 'base64']).describe('`base64` for DER and PKCS#12.'),
    content: z.string(),
    this_update: Timestamp.optional().describe('The CRL’s thisUpdate (crl only).'),
    next_update: Timestamp.optional().describe('The CRL’s nextUpdate (crl only).'),
    revoked_count: z.int().min(0).optional().describe('The CRL’s entries (crl only).'),
  }),
});

/** GET /api/v1/.well-known/jwks.json: public parameters only. */
export const AccountJwks = z.strictObject({
  keys: z.array(
    z
      .strictObject({
        kty: z.string(),
        crv: z.string().optional(),
        x: z.string().optional(),
        y: z.string().optional(),
        n: z.string().optional(),
        e: z.string().optional(),
        kid: z.string().optional(),
        alg: z.string().optional(),
        use: z.string().optional(),
        key_ops: z.array(z.string()).optional(),
      })
      .describe('A public JWK (RFC 7517).'),
  ),
});

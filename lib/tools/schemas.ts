import * as z from 'zod/v4';
import { Timestamp } from '../schemas.js';
import { FORMATS } from './transform/codecs.js';

/* Responses of the tool routes (functions/tools); S/KEY and time-locks: beside their request schemas. */

/** POST /api/v1/intelligence/check-breach */
export const BreachCheck = z.object({
  breached: z.boolean(),
  count: z.int().min(0).describe('How often the password appears in known breaches.'),
  checked: z
    .union([z.literal('password'), z.object({ type: z.string(), id: z.uuid() })])
    .describe('`password`, or the stored credential whose password was checked.'),
  method: z.string().describe('Only a 5-character SHA-1 prefix leaves the service (k-anonymity).'),
});

/** POST /api/v1/escrow/split */
export const EscrowSplit = z.object({
  split_id: z.string(),
  threshold: z.int().min(2),
  shares: z.array(z.string()).describe('The shares, returned once and never stored: hand each to one holder.'),
});

/** POST /api/v1/escrow/combine */
export const EscrowCombined = z.object({
  split_id: z.string(),
  secret: z.string().nullable().describe('The secret as text, when it is UTF-8 text; else null.'),
  secret_base64: z.base64(),
});

/** POST /api/v1/export/{json,keychain,credential-manager} */
export const CredentialExport = z.object({
  format: z.enum(['json', 'keychain', 'credential-manager']),
  encrypted: z.boolean().describe('Encrypted with the passphrase (Bitwarden password-protected JSON, or age for CSV).'),
  count: z.int().min(0),
  types: z.record(z.string(), z.int().min(0)).describe('Records exported by type.'),
  skipped_types: z
    .array(z.object({ type: z.string(), needs: z.array(z.string()) }))
    .describe('Types left out because the caller lacks their read scopes.'),
  file: z.object({ name: z.string(), content_type: z.string(), content: z.string().describe('The file to import into the password manager.') }),
});

/** Database extraction jobs */
const ExtractionJob = z.object({
  id: z.uuid(),
  status: z.enum(['queued', 'running', 'succeeded', 'failed']),
  connection_id: z.uuid(),
  engine: z.string().nullable(),
  source: z.record(z.string(), z.string()),
  name_prefix: z.string(),
  counts: z.object({
    rows: z.int().min(0),
    processed: z.int().min(0),
    created: z.int().min(0),
    updated: z.int().min(0),
    unchanged: z.int().min(0),
    failed: z.int().min(0),
  }),
  progress: z.number().min(0).max(1),
  truncated: z.boolean(),
  errors: z.array(z.object({ row: z.int(), name: z.string().nullable(), error: z.string() })),
  error: z.string().nullable(),
  created_at: Timestamp,
  started_at: Timestamp.nullable(),
  finished_at: Timestamp.nullable(),
});
export const ExtractionJobAnswer = z.object({ job: ExtractionJob });

/** IPFS */
export const IpfsStored = z.object({
  cid: z.string().describe('The CID an IPFS node computes for the encrypted bytes.'),
  size: z.int().min(0),
  encryption: z.enum(['caller-key', 'account-key']),
});
export const IpfsFetched = z.object({
  cid: z.string(),
  size: z.int().min(0),
  content: z.string().optional().describe('The content as text, when it is UTF-8 text.'),
  content_base64: z.base64().optional().describe('The content, when it is not text.'),
});

/** LDAP */
const LdapValue = z.union([z.string(), z.object({ base64: z.base64() })]);
export const LdapSearch = z.object({
  connection_id: z.uuid(),
  base_dn: z.string(),
  filter: z.string(),
  entries: z.array(z.object({ dn: z.string(), attributes: z.record(z.string(), z.array(LdapValue)) })).describe('Password attributes are withheld.'),
  total: z.int().min(0),
  truncated: z.boolean(),
});
export const LdifExport = z.object({
  connection_id: z.uuid(),
  base_dn: z.string(),
  entries: z.int().min(0),
  ldif: z.string().describe('RFC 2849 LDIF.'),
});
export const LdifImport = z.object({
  connection_id: z.uuid(),
  dry_run: z.boolean(),
  records: z.int().min(0),
  applied: z.int().min(0),
  would_apply: z.int().min(0),
  failed: z.int().min(0),
  skipped: z.int().min(0),
  results: z.array(
    z.object({
      line: z.int().min(1),
      dn: z.string(),
      changetype: z.enum(['add', 'delete', 'modify']),
      status: z.enum(['applied', 'would_apply', 'failed', 'skipped']),
      error: z.string().optional(),
    }),
  ),
});

/** Steganography */
export const StegEncoded = z.object({
  png_base64: z.base64(),
  width: z.int().min(1),
  height: z.int().min(1),
  capacity: z.int().min(0).describe('Bytes the carrier can hide.'),
  bytes: z.int().min(0).describe('Bytes hidden.'),
});
export const StegDecoded = z.object({
  payload: z.string().nullable().describe('The payload as text, when it is UTF-8 text.'),
  payload_base64: z.base64(),
});

/** Transform */
export const Encoded = z.object({ format: z.enum(FORMATS), output: z.string() });
export const Decoded = z.union([
  z.object({
    format: z.literal('jwt'),
    header: z.record(z.string(), z.unknown()),
    payload: z.record(z.string(), z.unknown()).nullable().describe('null for an encrypted JWT (JWE).'),
    encrypted: z.boolean(),
    signature_present: z.boolean(),
    verified: z.literal(false),
    warning: z.string().describe('The signature was not checked.'),
  }),
  z.object({
    format: z.enum(FORMATS),
    output: z.string().nullable().describe('The decoded bytes as text, when they are text.'),
    output_base64: z.base64(),
    bytes: z.int().min(0),
    label: z.string().optional().describe('The PEM label.'),
  }),
]);
export const Detected = z.object({
  formats: z.array(
    z.object({
      format: z.string(),
      decodes_to: z.string().optional(),
      detail: z.record(z.string(), z.unknown()).optional(),
    }),
  ),
  findings: z
    .array(
      z.object({
        rule: z.string(),
        description: z.string(),
        severity: z.string(),
        start: z.int().min(0),
        end: z.int().min(0),
        preview: z.string().describe('Redacted: never the whole secret.'),
        entropy: z.number().optional(),
      }),
    )
    .describe('Likely secrets in the input.'),
});

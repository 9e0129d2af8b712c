import * as z from 'zod/v4';
import { atLeastOneField, Description, ListPage, Timestamp } from '../schemas.js';

/** Request bodies of the SAML stores (docs/api.md, "Federation"). */

const MAX_XML = 256 * 1024;
/** XML as a string, or base64 of it (what an HTTP-POST binding carries). */
const XmlText = z
  .string()
  .min(1)
  .max(Math.ceil((MAX_XML * 4) / 3) + 4);

export const CreateMetadataBody = z.strictObject({
  xml: XmlText,
  description: Description.optional(),
});
export type CreateMetadataBody = z.infer<typeof CreateMetadataBody>;

export const UpdateMetadataBody = atLeastOneField(z.strictObject({ xml: XmlText.optional(), description: Description.optional() }));
export type UpdateMetadataBody = z.infer<typeof UpdateMetadataBody>;

export const StoreAssertionBody = z.strictObject({
  /** A signed saml:Assertion, or a samlp:Response carrying exactly one; XML or base64. */
  assertion: XmlText,
});
export type StoreAssertionBody = z.infer<typeof StoreAssertionBody>;

export const CheckReplayBody = z.strictObject({
  assertion_id: z.string().min(1).max(256),
  issuer: z.string().min(1).max(1024),
  not_on_or_after: z.iso.datetime({ offset: true }),
});
export type CheckReplayBody = z.infer<typeof CheckReplayBody>;

export const MAX_XML_BYTES = MAX_XML;

/* Responses */

const Certificate = z.object({
  use: z.enum(['signing', 'encryption', 'both']),
  pem: z.string(),
  fingerprint_sha256: z.string(),
  subject: z.string(),
  not_before: z.string(),
  not_after: z.string(),
});

const MetadataSchema = z.object({
  id: z.uuid(),
  entity_id: z.string().describe('The entityID (unique in the account).'),
  description: z.string(),
  roles: z.array(z.string()),
  endpoints: z.array(z.object({ role: z.string(), kind: z.string(), binding: z.string(), location: z.string() })),
  certificates: z.array(Certificate),
  certificates_expire_at: z.string().nullable().describe('The earliest certificate expiry.'),
  signed: z.boolean(),
  valid_until: z.string().nullable(),
  xml_sha256: z.string(),
  version: z.int().min(1),
  created_at: Timestamp,
  updated_at: Timestamp,
  created_by: z.string().nullable(),
});
export const MetadataPage = ListPage('metadata', MetadataSchema, { paged: true });
export const MetadataAnswer = z.object({ metadata: MetadataSchema });
export const MetadataDeleted = z.object({ deleted: z.literal(true), metadata: z.object({ id: z.uuid(), entity_id: z.string() }) });

const AssertionSchema = z.object({
  id: z.uuid(),
  assertion_id: z.string(),
  issuer: z.string(),
  metadata_id: z.uuid().describe('The metadata whose certificate verified the assertion.'),
  subject: z.string().nullable(),
  subject_format: z.string().nullable(),
  issue_instant: z.string().nullable(),
  not_before: z.string().nullable(),
  not_on_or_after: z.string(),
  recipient: z.string().nullable(),
  audiences: z.array(z.string()),
  authn_instant: z.string().nullable(),
  session_index: z.string().nullable(),
  signature_algorithm: z.string(),
  certificate_sha256: z.string(),
  xml_sha256: z.string().describe('The assertion XML is not kept, only its SHA-256.'),
  version: z.int().min(1),
  created_at: Timestamp,
  created_by: z.string().nullable(),
});
export const AssertionPage = ListPage('assertions', AssertionSchema, { paged: true });
export const AssertionAnswer = z.object({ assertion: AssertionSchema });
export const AssertionDeleted = z.object({ deleted: z.literal(true), assertion: z.object({ id: z.uuid(), assertion_id: z.string() }) });
export const ReplayFresh = z.object({
  fresh: z.literal(true),
  expires_at: Timestamp.describe('Until then the same assertion id is a replay (409 `assertion_replayed`).'),
});

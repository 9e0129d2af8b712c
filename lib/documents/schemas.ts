import * as z from 'zod/v4';
import { ListPage, PageQuery, Timestamp, Uuid } from '../schemas.js';

/**
 * Request schemas of the protected documents (lib/documents). A document travels as base64
 * inside the JSON body: at most MAX_DOCUMENT_BYTES after decoding, which keeps the body
 * (4/3 of it, plus the other fields) under the route's limit (lib/routes.ts BODY_LIMITS).
 */
export const MAX_DOCUMENT_BYTES = 2 * 1024 * 1024;
/** Longest base64 text of a document at the limit (padding included). */
const MAX_BASE64_CHARS = 4 * Math.ceil(MAX_DOCUMENT_BYTES / 3);

const Flag = (dflt: boolean) => z.boolean().default(dflt);

export const UploadBody = z.strictObject({
  name: z.string().trim().min(1).max(255),
  description: z.string().max(1024).default(''),
  /** The media type the client claims; anything but application/pdf is a 415. */
  content_type: z.string().max(255).default('application/pdf'),
  /** The PDF, base64 (standard alphabet, padding optional). Over-long text is checked by the service (413). */
  content_base64: z
    .string()
    .min(1)
    .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'standard base64 (A-Z a-z 0-9 + /, = padding)'),
  /** The password that opens a password-protected PDF (kept sealed, used to render its pages). */
  password: z.string().min(1).max(127).optional(),
  allow_download: Flag(true),
  allow_render: Flag(true),
});
export type UploadBody = z.infer<typeof UploadBody>;
export const MAX_UPLOAD_BASE64 = MAX_BASE64_CHARS;

/** `?shared=true` lists the documents granted to the caller's user instead of the account's own. */
export const DocumentListQuery = PageQuery.extend({ shared: z.enum(['true', 'false']).default('false') });
export type DocumentListQuery = z.infer<typeof DocumentListQuery>;

/** A grant lasts at most a year. */
const MAX_GRANT_MS = 366 * 24 * 3600 * 1000;

export const GrantBody = z.strictObject({
  grantee_email: z
    .email()
    .max(254)
    .transform((e) => e.toLowerCase()),
  expires_at: z.iso
    .datetime({ offset: true })
    .refine((v) => Date.parse(v) > Date.now(), 'must be in the future')
    .refine((v) => Date.parse(v) <= Date.now() + MAX_GRANT_MS, 'at most 366 days ahead')
    .transform((v) => new Date(v).toISOString()),
  allow_download: Flag(false),
  allow_render: Flag(true),
});
export type GrantBody = z.infer<typeof GrantBody>;

export const GrantParams = z.strictObject({ id: Uuid, grant: Uuid });

/** Pages are numbered from 1. */
export const PageParams = z.strictObject({ id: Uuid, page: z.coerce.number().int().min(1).max(100_000) });

/** Render scale: 1 = 72 dpi (one pixel per PDF point); bounded further by MAX_RENDER_PIXELS per side. */
export const RenderQuery = z.strictObject({ scale: z.coerce.number().min(0.25).max(4).default(1.5) });

/* Responses */

const DocumentSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  description: z.string(),
  content_type: z.literal('application/pdf'),
  size_bytes: z.int().min(0),
  pages: z.int().min(1),
  password_protected: z.boolean(),
  allow_download: z.boolean().describe('Whether the original may be downloaded.'),
  allow_render: z.boolean().describe('Whether pages may be rendered (watermarked).'),
  version: z.int().min(1),
  created_at: Timestamp,
  created_by: z.string().nullable(),
});

/** `?shared=true`: the documents granted to the caller (the grant's metadata). */
const GrantedDocument = z.object({
  id: z.uuid(),
  name: z.string(),
  owner_tenant_id: z.uuid(),
  grant_id: z.uuid(),
  expires_at: Timestamp,
  allow_download: z.boolean(),
  allow_render: z.boolean(),
});

export const DocumentPage = ListPage('documents', z.union([DocumentSchema, GrantedDocument]), {
  paged: true,
  describe: 'The account’s documents, or with `shared=true` those granted to the caller.',
});

export const DocumentAnswer = z.object({
  document: DocumentSchema.extend({
    access: z.object({
      via: z.enum(['owner', 'grant']),
      allow_download: z.boolean(),
      allow_render: z.boolean(),
      grant_id: z.uuid().optional(),
      expires_at: Timestamp.optional(),
    }),
  }),
});

export const UploadedDocument = z.object({ document: DocumentSchema });

export const DocumentDownload = z.object({
  document: DocumentSchema,
  content_type: z.literal('application/pdf'),
  encoding: z.literal('base64'),
  content: z.base64().describe('The original PDF.'),
  audit_id: z.string(),
});

export const RenderedPage = z.object({
  document_id: z.uuid(),
  page: z.int().min(1),
  pages: z.int().min(1),
  width: z.int().min(1),
  height: z.int().min(1),
  scale: z.number().positive(),
  page_width_pt: z.number().positive(),
  page_height_pt: z.number().positive(),
  watermark: z.object({ viewer: z.string(), at: Timestamp }).describe('What the watermark on the image says.'),
  content_type: z.literal('image/png'),
  encoding: z.literal('base64'),
  content: z.base64(),
  audit_id: z.string(),
});

const DocumentGrantSchema = z.object({
  id: z.uuid(),
  document_id: z.uuid(),
  grantee_email: z.string(),
  expires_at: Timestamp,
  allow_download: z.boolean(),
  allow_render: z.boolean(),
  status: z.enum(['active', 'expired']),
  created_at: Timestamp,
  created_by: z.string().nullable(),
});
export const DocumentGrantList = z.object({ grants: z.array(DocumentGrantSchema), total: z.int().min(0) });
export const DocumentGrantAnswer = z.object({ grant: DocumentGrantSchema });
export const DocumentGrantRevoked = z.object({ revoked: z.literal(true), grant: DocumentGrantSchema.extend({ revoked_at: Timestamp }) });

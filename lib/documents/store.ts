import * as z from 'zod/v4';
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../store/client.js';
import { entity, nullable } from '../store/entity.js';
import { keys } from '../store/keys.js';
import { queryAll } from '../store/pagination.js';
import type { TxItem } from '../store/tx.js';

/**
 * The items of a protected document (lib/store/keys.ts): its metadata `DOC#<id>` in the
 * owner's partition (the PDF is in S3, sealed), its grants `DOCGRANT#<doc>#<grant>`, and for
 * each grant the grantee's lookup `DOCGRANTEE#<email>` / `<doc id>`, read consistently on
 * every request of the grantee so that a revocation (which deletes it) applies at once.
 */
export const DocumentItem = entity(
  'document',
  z.object({
    id: z.string(),
    name: z.string(),
    description: z.string().default(''),
    size_bytes: z.number().int(),
    pages: z.number().int(),
    password_protected: z.boolean(),
    allow_download: z.boolean(),
    allow_render: z.boolean(),
    version: z.number().int(),
    object_key: z.string(),
    created_at: z.string(),
    created_by: nullable(z.string()),
    /** The PDF's password, sealed (type `document_password`), when it has one. */
    password: z.custom<Uint8Array>((v) => v instanceof Uint8Array, 'sealed bytes').optional(),
  }),
);
export type StoredDocument = ReturnType<typeof DocumentItem.parse>;

/** What the API shows of a document (never the sealed password nor the object key). */
export const documentView = (d: StoredDocument) => ({
  id: d.id,
  name: d.name,
  description: d.description,
  content_type: 'application/pdf',
  size_bytes: d.size_bytes,
  pages: d.pages,
  password_protected: d.password_protected,
  allow_download: d.allow_download,
  allow_render: d.allow_render,
  version: d.version,
  created_at: d.created_at,
  created_by: d.created_by,
});

/** The fields a list reads (no sealed password). */
export const LIST_FIELDS = DocumentItem.fields.filter((f) => f !== 'password');

export const GrantItem = entity(
  'document grant',
  z.object({
    id: z.string(),
    document_id: z.string(),
    document_name: z.string(),
    owner_tenant_id: z.string(),
    grantee_email: z.string(),
    expires_at: z.string(),
    allow_download: z.boolean(),
    allow_render: z.boolean(),
    created_at: z.string(),
    created_by: nullable(z.string()),
  }),
);
export type Grant = ReturnType<typeof GrantItem.parse>;

export const grantView = (g: Grant, now = new Date()) => ({
  id: g.id,
  document_id: g.document_id,
  grantee_email: g.grantee_email,
  expires_at: g.expires_at,
  allow_download: g.allow_download,
  allow_render: g.allow_render,
  status: g.expires_at > now.toISOString() ? 'active' : 'expired',
  created_at: g.created_at,
  created_by: g.created_by,
});

export async function readDocument(tenantId: string, id: string): Promise<StoredDocument | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.document(tenantId, id), ConsistentRead: true }));
  return out.Item ? DocumentItem.parse(out.Item) : undefined;
}

/** The grantee's lookup of one document (consistent: a revocation applies to the next request). */
export async function granteeGrant(email: string, documentId: string): Promise<Grant | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.documentGrantee(email, documentId), ConsistentRead: true }));
  return out.Item ? GrantItem.parse(out.Item) : undefined;
}

export async function readGrant(tenantId: string, documentId: string, grantId: string): Promise<Grant | undefined> {
  const out = await db().send(
    new GetCommand({ TableName: tableName(), Key: keys.documentGrant(tenantId, documentId, grantId), ConsistentRead: true }),
  );
  return out.Item ? GrantItem.parse(out.Item) : undefined;
}

// --- uploads (lib/documents/upload.ts): the intent `DOCUPLOAD#<id>` written before the object

export async function putUploadIntent(tenantId: string, id: string, objectKey: string, createdAt: string): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...keys.documentUpload(tenantId, id), id, object_key: objectKey, created_at: createdAt },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
}

/** The document's metadata item (a transaction item), never overwriting one. */
export const documentPut = (tenantId: string, id: string, doc: Record<string, unknown>): TxItem => ({
  Put: { TableName: tableName(), Item: { ...doc, ...keys.document(tenantId, id) }, ConditionExpression: 'attribute_not_exists(pk)' },
});

/** The end of an upload's intent (a transaction item). */
export const uploadIntentDelete = (tenantId: string, id: string): TxItem => ({
  Delete: { TableName: tableName(), Key: keys.documentUpload(tenantId, id) },
});

export async function deleteUploadIntent(tenantId: string, id: string): Promise<void> {
  await db().send(new DeleteCommand({ TableName: tableName(), Key: keys.documentUpload(tenantId, id) }));
}

/** Up to `max` of the account's upload intents. */
export const uploadIntents = (tenantId: string, max: number) =>
  queryAll({ pk: keys.tenant(tenantId).pk, sk: { prefix: keys.documentUploadPrefix } }, max);

/** Whether the document's metadata item exists (a projected consistent read). */
export async function documentRecorded(tenantId: string, id: string): Promise<boolean> {
  const recorded = await db().send(
    new GetCommand({ TableName: tableName(), Key: keys.document(tenantId, id), ConsistentRead: true, ProjectionExpression: 'pk' }),
  );
  return recorded.Item !== undefined;
}

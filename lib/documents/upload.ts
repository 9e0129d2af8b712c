import type { CallContext } from '../auth/principal.js';
import { requireScopes } from '../auth/scopes.js';
import { commit } from '../audit/audit.js';
import { seal } from '../crypto/envelope.js';
import { HttpError, payloadTooLarge } from '../http/errors.js';
import { newId, nowIso } from '../ids.js';
import { tableName } from '../store/client.js';
import { keys } from '../store/keys.js';
import { actorName } from '../store/resources.js';
import { WRITE_SCOPE } from './access.js';
import { docScope, passwordScope } from './documents.js';
import { inspectPdf } from './pdf.js';
import { documentView, type StoredDocument } from './records.js';
import { MAX_DOCUMENT_BYTES, MAX_UPLOAD_BASE64, type UploadBody } from './schemas.js';
import { deleteObject, objectKey, putObject } from './storage.js';

/**
 * POST /api/v1/documents: the PDF is opened (lib/documents/pdf.ts) before anything is
 * stored, then sealed with the account's envelope key and put in the bucket; the metadata
 * item (with the PDF's password sealed, if it has one) commits with the audit entry and the
 * event. Its own module, so that only the upload function carries the PDF parser.
 */
export async function uploadDocument(ctx: CallContext, body: UploadBody) {
  requireScopes(ctx.principal, [WRITE_SCOPE]);
  if (body.content_type.split(';')[0]!.trim().toLowerCase() !== 'application/pdf') {
    throw new HttpError(
      415,
      'not_a_pdf',
      `content_type ${JSON.stringify(body.content_type)} is not accepted: only application/pdf documents are stored`,
    );
  }
  if (body.content_base64.length > MAX_UPLOAD_BASE64) throw payloadTooLarge(MAX_DOCUMENT_BYTES, 'the limit applies to the decoded document');
  const bytes = Buffer.from(body.content_base64, 'base64');
  if (bytes.length > MAX_DOCUMENT_BYTES) throw payloadTooLarge(MAX_DOCUMENT_BYTES, 'the limit applies to the decoded document');
  const facts = await inspectPdf(bytes, body.password);
  const tid = ctx.principal.tenantId;
  const id = newId();
  const version = 1;
  const key = objectKey(tid, id, version);
  const doc: StoredDocument = {
    id,
    name: body.name,
    description: body.description,
    size_bytes: bytes.length,
    pages: facts.pages,
    password_protected: facts.password_protected,
    allow_download: body.allow_download,
    allow_render: body.allow_render,
    version,
    object_key: key,
    created_at: nowIso(),
    created_by: actorName(ctx),
    ...(facts.password_protected ? { password: await seal(passwordScope(tid, id, version), body.password!) } : {}),
  };
  // the object first: a metadata item never names a missing object; a failed commit removes it
  await putObject(key, await seal(docScope(tid, id, version), bytes));
  try {
    await commit(
      ctx,
      tid,
      [{ Put: { TableName: tableName(), Item: { ...doc, ...keys.document(tid, id) }, ConditionExpression: 'attribute_not_exists(pk)' } }],
      {
        action: 'document.upload',
        resource: { type: 'document', id, name: doc.name },
        detail: { size_bytes: doc.size_bytes, pages: doc.pages, password_protected: doc.password_protected },
        event: { type: 'document.created', data: { id, name: doc.name } },
      },
    );
  } catch (error) {
    await deleteObject(key).catch(() => undefined);
    throw error;
  }
  return documentView(doc);
}

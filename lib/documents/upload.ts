import type { CallContext } from '../auth/principal.js';
import { requireScopes } from '../auth/scopes.js';
import { commit } from '../audit/audit.js';
import { seal } from '../crypto/envelope.js';
import { HttpError, payloadTooLarge } from '../core/errors.js';
import { newId, nowIso } from '../ids.js';
import { actorName } from '../resources/store.js';
import { WRITE_SCOPE } from './access.js';
import { docScope, passwordScope } from './documents.js';
import { inspectPdf } from './pdf.js';
import {
  deleteUploadIntent,
  documentPut,
  documentRecorded,
  documentView,
  putUploadIntent,
  type StoredDocument,
  uploadIntentDelete,
  uploadIntents,
} from './store.js';
import { MAX_DOCUMENT_BYTES, MAX_UPLOAD_BASE64, type UploadBody } from './schemas.js';
import { deleteObject, objectKey, putObject } from './storage.js';

/**
 * POST /api/v1/documents: the PDF is opened (lib/documents/pdf.ts) before anything is
 * stored, then sealed with the account's envelope key and put in the bucket; the metadata
 * item (with the PDF's password sealed, if it has one) commits with the audit entry and the
 * event. Its own module, so that only the upload function carries the PDF parser.
 *
 * The writes are ordered so that a crash at any point leaves no object the table does not
 * name: an upload intent (`DOCUPLOAD#<id>`, naming the object key) is written before the
 * object; the commit that records the document deletes it. A failed commit removes the
 * object and the intent at once; a crash between the object and the commit leaves the intent,
 * and sweepAbandonedUploads — run after each upload of the account — deletes the object and
 * the intent once the intent is older than any upload can run.
 */

/** An intent younger than this may belong to an upload still running (a function runs 15 min at most). */
export const ABANDONED_AFTER_MS = 15 * 60_000;
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
  // the intent, then the object: a metadata item never names a missing object, and no object
  // is left that the table does not name; the commit records the document and ends the intent
  await putUploadIntent(tid, id, key, doc.created_at);
  await putObject(key, await seal(docScope(tid, id, version), bytes));
  try {
    await commit(ctx, tid, [documentPut(tid, id, doc), uploadIntentDelete(tid, id)], {
      action: 'document.upload',
      resource: { type: 'document', id, name: doc.name },
      detail: { size_bytes: doc.size_bytes, pages: doc.pages, password_protected: doc.password_protected },
      event: { type: 'document.created', data: { id, name: doc.name } },
    });
  } catch (error) {
    await deleteObject(key)
      .then(() => deleteUploadIntent(tid, id))
      .catch(() => undefined);
    throw error;
  }
  // the account's earlier uploads that crashed before their commit: never this answer's failure
  await sweepAbandonedUploads(tid).catch(() => undefined);
  return documentView(doc);
}

/**
 * Removes the objects of the account's abandoned uploads (an intent older than
 * ABANDONED_AFTER_MS whose document was never recorded) and their intents; an intent whose
 * document exists is only deleted. Answers how many objects were removed.
 */
export async function sweepAbandonedUploads(tenantId: string, now = Date.now(), max = 25): Promise<number> {
  const intents = await uploadIntents(tenantId, max);
  let removed = 0;
  for (const intent of intents) {
    if (now - Date.parse(String(intent.created_at)) < ABANDONED_AFTER_MS) continue;
    const id = String(intent.id);
    if (!(await documentRecorded(tenantId, id))) {
      await deleteObject(String(intent.object_key));
      removed += 1;
    }
    await deleteUploadIntent(tenantId, id);
  }
  return removed;
}

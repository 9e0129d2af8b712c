import { downloadDocument, getDocument, listDocuments } from '../../lib/documents/documents.js';
import { DocumentAnswer, DocumentDownload, DocumentListQuery, DocumentPage } from '../../lib/documents/schemas.js';
import { defineHandler, ok } from '../../lib/http/index.js';
import { IdParams, listPage } from '../../lib/schemas.js';

/** Protected documents: list (own, or `?shared=true` granted to the caller), get, download (lib/documents). */
export const list = defineHandler({
  summary: 'List protected documents',
  description: 'The account’s documents (documents:read), or with `shared=true` the unexpired ones other accounts granted to the caller’s user.',
  responses: { 200: DocumentPage },
  errors: ['insufficient_scope', 'bad_request'],
  query: DocumentListQuery,
  async handler({ ctx, query }) {
    const page = await listDocuments(ctx, query);
    return ok(listPage<object>('documents', page.documents, page.nextCursor, query));
  },
});

export const get = defineHandler({
  summary: 'Get a protected document',
  description: 'Its metadata and what the caller may do with it (as owner, or through a grant).',
  responses: { 200: DocumentAnswer },
  errors: ['not_found', 'grant_expired', 'insufficient_scope'],
  params: IdParams,
  async handler({ ctx, params }) {
    return ok({ document: await getDocument(ctx, params.id) });
  },
});

export const download = defineHandler({
  summary: 'Download a protected document',
  description: 'The original PDF (base64), when the document and the caller’s grant allow downloading; audited.',
  responses: { 200: DocumentDownload },
  errors: ['not_found', 'download_disabled', 'grant_expired', 'insufficient_scope'],
  params: IdParams,
  async handler({ ctx, params }) {
    return ok(await downloadDocument(ctx, params.id));
  },
});

import { downloadDocument, getDocument, listDocuments } from '../../lib/documents/documents.js';
import { DocumentListQuery } from '../../lib/documents/schemas.js';
import { defineHandler, ok } from '../../lib/http/index.js';
import { IdParams, listPage } from '../../lib/schemas.js';

/** Protected documents: list (own, or `?shared=true` granted to the caller), get, download (lib/documents). */
export const list = defineHandler({
  query: DocumentListQuery,
  async handler({ ctx, query }) {
    const page = await listDocuments(ctx, query);
    return ok(listPage<object>('documents', page.documents, page.nextCursor, query));
  },
});

export const get = defineHandler({
  params: IdParams,
  async handler({ ctx, params }) {
    return ok({ document: await getDocument(ctx, params.id) });
  },
});

export const download = defineHandler({
  params: IdParams,
  async handler({ ctx, params }) {
    return ok(await downloadDocument(ctx, params.id));
  },
});

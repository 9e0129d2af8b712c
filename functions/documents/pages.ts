import { renderDocumentPage } from '../../lib/documents/preview.js';
import { PageParams, RenderedPage, RenderQuery } from '../../lib/documents/schemas.js';
import { defineHandler, ok } from '../../lib/http/index.js';

/** GET /api/v1/documents/{id}/pages/{page}: a watermarked PNG of one page; the only module that loads the renderer. */
export const render = defineHandler({
  summary: 'Render a page of a document',
  description:
    'One page as a PNG (base64) watermarked with the viewer and the time, when the document and the caller’s grant allow rendering; audited.',
  responses: { 200: RenderedPage },
  errors: ['not_found', 'render_disabled', 'grant_expired', 'insufficient_scope', 'bad_request'],
  params: PageParams,
  query: RenderQuery,
  async handler({ ctx, params, query }) {
    return ok(await renderDocumentPage(ctx, params.id, params.page, query.scale));
  },
});

import { renderDocumentPage } from '../../lib/documents/preview.js';
import { PageParams, RenderQuery } from '../../lib/documents/schemas.js';
import { defineHandler, ok } from '../../lib/http/index.js';

/** GET /api/v1/documents/{id}/pages/{page}: a watermarked PNG of one page; the only module that loads the renderer. */
export const render = defineHandler({
  params: PageParams,
  query: RenderQuery,
  async handler({ ctx, params, query }) {
    return ok(await renderDocumentPage(ctx, params.id, params.page, query.scale));
  },
});

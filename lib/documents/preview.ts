import type { CallContext } from '../auth/principal.js';
import { admitted } from '../core/admission.js';
import { notFound } from '../core/errors.js';
import { nowIso } from '../ids.js';
import { audit, requireUse, resolveDocument } from './access.js';
import { documentPassword, openDocument } from './documents.js';
import { PageOutOfRange, renderPage } from './render.js';

/**
 * GET /api/v1/documents/{id}/pages/{page}: one page as PNG, watermarked with the viewer
 * (the user its credential acts for, else the credential's kind and id; its account) and
 * the time, when the document and the caller's grant allow rendering; every view audited.
 */
export async function renderDocumentPage(ctx: CallContext, id: string, pageNumber: number, scale: number) {
  const access = await resolveDocument(ctx, id);
  await requireUse(ctx, access, 'render');
  const at = nowIso();
  const p = ctx.principal;
  const viewer = p.user ?? `${p.kind} ${p.id}`;
  const watermark = [`${viewer} · ${at}`, `account ${p.tenantId} · ${access.doc.name}`];
  let out: ReturnType<typeof renderPage>;
  // the render is the route's heavy work: a request that will be refused never starts it (issue 32)
  await admitted();
  try {
    out = renderPage({ pdf: await openDocument(access), password: await documentPassword(access), page: pageNumber, scale, watermark });
  } catch (error) {
    if (error instanceof PageOutOfRange) throw notFound(`page ${pageNumber} (the document has ${error.pages})`);
    throw error;
  }
  const auditId = await audit(ctx, access, 'document.view', 'success', { page: pageNumber, scale: out.scale });
  return {
    document_id: access.doc.id,
    page: pageNumber,
    pages: access.doc.pages,
    width: out.width,
    height: out.height,
    scale: out.scale,
    page_width_pt: out.page_width_pt,
    page_height_pt: out.page_height_pt,
    watermark: { viewer, at },
    content_type: 'image/png',
    encoding: 'base64',
    content: Buffer.from(out.png).toString('base64'),
    audit_id: auditId,
  };
}

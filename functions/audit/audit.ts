import { recordAudit } from '../../lib/audit/audit.js';
import { adminListAudit, exportAudit, exportToCsv, exportToJsonLines, listAudit, type AuditFilter } from '../../lib/audit/query.js';
import { defineHandler, download, ok } from '../../lib/http/index.js';
import { listPage } from '../../lib/schemas.js';
import { AdminAuditQuery, AuditExportQuery, AuditListQuery, AuditPage } from '../../lib/audit/schemas.js';

const filterOf = (q: AuditListQuery | AdminAuditQuery): AuditFilter => {
  const { limit: _l, cursor: _c, ...f } = q;
  return f;
};

/** GET /api/v1/audit/logs: the account's entries, newest first. */
export const list = defineHandler({
  summary: 'List audit log entries',
  description:
    'The account’s audit entries, newest first, filtered by actor, action (a trailing `*` matches a prefix), resource, outcome and time range. A page may hold fewer than `limit` entries when a selective filter reaches the scan budget: follow `next_cursor`.',
  responses: { 200: AuditPage },
  errors: ['bad_request'],
  query: AuditListQuery,
  async handler({ ctx, query }) {
    const page = await listAudit(ctx.principal.tenantId, filterOf(query), query);
    return ok(listPage('entries', page.entries, page.nextCursor));
  },
});

/**
 * GET /api/v1/audit/logs/export: a time range in chain order as JSON Lines (last line: the
 * signed digest) or CSV (digest in the `Audit-Digest` header, base64url JSON). Verification:
 * lib/audit/verify.ts, scripts/audit-verify.ts.
 */
export const exportLogs = defineHandler({
  summary: 'Export the audit log',
  description:
    'A time range (by default the last 24 hours) in chain order, as JSON Lines whose last line is the signed digest, or as CSV with the digest in the `Audit-Digest` header (base64url JSON). At most 5,000 entries per response; `X-Next-Cursor` continues. Verify with scripts/audit-verify.ts.',
  responses: { 200: null },
  media: { 200: ['application/x-ndjson', 'text/csv'] },
  errors: ['bad_request'],
  query: AuditExportQuery,
  async handler({ ctx, query }) {
    const to = query.to ?? Date.now();
    const from = query.from ?? to - 24 * 3600_000;
    const tid = ctx.principal.tenantId;
    const x = await exportAudit(tid, { from, to, cursor: query.cursor });
    await recordAudit(ctx, tid, {
      action: 'audit.export',
      resource: { type: 'audit_log', id: tid },
      detail: { format: query.format, from: new Date(from).toISOString(), to: new Date(to).toISOString(), count: x.entries.length },
    });
    const headers: Record<string, string> = {
      'Content-Disposition': `attachment; filename="audit-${tid}-${new Date(from).toISOString().slice(0, 10)}.${query.format}"`,
      ...(x.nextCursor ? { 'X-Next-Cursor': x.nextCursor } : {}),
    };
    if (query.format === 'csv') {
      headers['Audit-Digest'] = Buffer.from(JSON.stringify({ digest: x.digest, signature: x.signature })).toString('base64url');
      return download(exportToCsv(x.entries), 'text/csv; charset=utf-8', headers);
    }
    return download(exportToJsonLines(x), 'application/x-ndjson; charset=utf-8', headers);
  },
});

/** GET /api/v1/admin/audit: every account's entries for the platform operator. */
export const adminList = defineHandler({
  summary: 'List audit log entries of every account',
  description:
    'For the platform operator: every account’s entries newest first, or one account’s with `tenant_id`, with the filters of the account listing.',
  responses: { 200: AuditPage },
  errors: ['bad_request'],
  query: AdminAuditQuery,
  async handler({ query }) {
    const page = await adminListAudit(filterOf(query), query);
    return ok(listPage('entries', page.entries, page.nextCursor));
  },
});

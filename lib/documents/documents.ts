import type { CallContext } from '../auth/principal.js';
import { requireScopes } from '../auth/scopes.js';
import { open } from '../crypto/envelope.js';
import { nowIso } from '../ids.js';
import { keys } from '../store/keys.js';
import { queryAll, queryPage } from '../store/pagination.js';
import { audit, granteeOf, READ_SCOPE, requireUse, resolveDocument, type Access } from './access.js';
import { DocumentItem, documentView, GrantItem, LIST_FIELDS } from './store.js';
import type { DocumentListQuery } from './schemas.js';
import { getObject } from './storage.js';
import { ownerScope } from '../tenancy/scope.js';

/**
 * Protected documents: a PDF uploaded once, kept in S3 sealed with the owner account's
 * envelope key (AAD: tenant, `document`, id, version), its metadata in the table; read by the
 * owner and by the users it grants access to (lib/documents/grants.ts), downloaded and
 * rendered only as the document's and the grant's controls allow, each use audited.
 */
export const docScope = (tenantId: string, id: string, version: number) => ({ tenantId, type: 'document', id, version });
export const passwordScope = (tenantId: string, id: string, version: number) => ({ tenantId, type: 'document_password', id, version });

export async function listDocuments(ctx: CallContext, query: DocumentListQuery) {
  if (query.shared === 'true') return listGranted(ctx, query);
  requireScopes(ctx.principal, [READ_SCOPE]);
  const page = await queryPage<Record<string, unknown>>({
    pk: keys.tenant(ctx.principal.tenantId).pk,
    prefix: keys.documentPrefix,
    limit: query.limit,
    offset: query.cursor ? 0 : query.offset,
    ...(query.cursor ? { cursor: query.cursor } : {}),
    projection: LIST_FIELDS,
    newestFirst: true,
  });
  return { documents: page.items.map((i) => documentView(DocumentItem.parse(i))), nextCursor: page.nextCursor };
}

/** At most this many grants are listed for one grantee. */
const MAX_LISTED_GRANTS = 1000;

/** The documents other accounts granted to the caller's user, unexpired (metadata of the grant). */
async function listGranted(ctx: CallContext, query: DocumentListQuery) {
  const email = granteeOf(ctx);
  const now = nowIso();
  const grants = email
    ? (await queryAll({ pk: keys.documentGranteePk(email) }, MAX_LISTED_GRANTS)).map((i) => GrantItem.parse(i)).filter((g) => g.expires_at > now)
    : [];
  const documents = grants.slice(query.offset, query.offset + query.limit).map((g) => ({
    id: g.document_id,
    name: g.document_name,
    owner_tenant_id: g.owner_tenant_id,
    grant_id: g.id,
    expires_at: g.expires_at,
    allow_download: g.allow_download,
    allow_render: g.allow_render,
  }));
  return { documents, nextCursor: undefined };
}

export async function getDocument(ctx: CallContext, id: string) {
  const access = await resolveDocument(ctx, id);
  return { ...documentView(access.doc), access: accessView(access) };
}

const accessView = (a: Access) => ({
  via: a.via,
  allow_download: a.doc.allow_download && (a.via === 'owner' || a.grant!.allow_download),
  allow_render: a.doc.allow_render && (a.via === 'owner' || a.grant!.allow_render),
  ...(a.grant ? { grant_id: a.grant.id, expires_at: a.grant.expires_at } : {}),
});

/** The opened PDF of an accessible document (the object's seal checked against its tenant, id and version). */
export async function openDocument(access: Access): Promise<Buffer> {
  const { tenantId, doc } = access;
  // a grantee reads the owner's object with the owner's session (its tenant-access role reaches
  // only tenants/<owner>/*) and opens it with the owner's data key (lib/tenancy/scope.ts)
  return ownerScope(tenantId, async () => open(docScope(tenantId, doc.id, doc.version), await getObject(doc.object_key)));
}

/** The password of a protected document, opened. */
export async function documentPassword(access: Access): Promise<string | undefined> {
  const { tenantId, doc } = access;
  const sealed = doc.password;
  if (!sealed) return undefined;
  return (await ownerScope(tenantId, () => open(passwordScope(tenantId, doc.id, doc.version), sealed))).toString('utf8');
}

/** The original PDF, when the document and the caller's grant allow it; audited. */
export async function downloadDocument(ctx: CallContext, id: string) {
  const access = await resolveDocument(ctx, id);
  await requireUse(ctx, access, 'download');
  const pdf = await openDocument(access);
  const auditId = await audit(ctx, access, 'document.download', 'success');
  return {
    document: documentView(access.doc),
    content_type: 'application/pdf',
    encoding: 'base64',
    content: pdf.toString('base64'),
    audit_id: auditId,
  };
}

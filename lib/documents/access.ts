import type { CallContext } from '../auth/principal.js';
import { requireScopes } from '../auth/scopes.js';
import { recordAudit } from '../audit/audit.js';
import { HttpError, notFound } from '../core/errors.js';
import { readAccount } from '../store/tenants.js';
import { ownerScope } from '../tenancy/scope.js';
import { type Grant, granteeGrant, readDocument, type StoredDocument } from './store.js';

/**
 * Who may use a document, in one place: the owner's account (with `documents:read`, else
 * 403), or the user (e-mail) an unexpired grant names, from any account, whose owner account
 * is active. The tenant a grantee reads from comes from the grant item, never the request.
 * Anything else — missing, another account's, a revoked grant — is the same 404; an expired
 * grant is a 403 `grant_expired` (its holder knows the document exists).
 */
export const READ_SCOPE = 'documents:read';
export const WRITE_SCOPE = 'documents:write';

export interface Access {
  readonly tenantId: string;
  readonly doc: StoredDocument;
  readonly via: 'owner' | 'grant';
  readonly grant?: Grant;
}

/** The caller's identity for grants: the user (e-mail) its credential acts for, lower-cased. */
export const granteeOf = (ctx: CallContext): string | null => ctx.principal.user?.toLowerCase() ?? null;

export async function resolveDocument(ctx: CallContext, id: string): Promise<Access> {
  const own = await readDocument(ctx.principal.tenantId, id);
  if (own) {
    requireScopes(ctx.principal, [READ_SCOPE]);
    return { tenantId: ctx.principal.tenantId, doc: own, via: 'owner' };
  }
  const email = granteeOf(ctx);
  const grant = email ? await granteeGrant(email, id) : undefined;
  if (!grant || grant.owner_tenant_id === ctx.principal.tenantId) throw notFound('document');
  if (grant.expires_at <= new Date().toISOString()) {
    throw new HttpError(403, 'grant_expired', `your access to this document expired at ${grant.expires_at}; ask its owner for a new grant`);
  }
  const owner = await readAccount(grant.owner_tenant_id);
  if (owner?.status !== 'active') throw notFound('document');
  // the grant passed: the owner's document is read with the owner's credentials (lib/tenancy/scope.ts)
  const doc = await ownerScope(grant.owner_tenant_id, () => readDocument(grant.owner_tenant_id, id));
  if (!doc) throw notFound('document');
  return { tenantId: grant.owner_tenant_id, doc, via: 'grant', grant };
}

/** The caller's own document (grant management, owner only): 404 when not in the caller's account. */
export async function ownDocument(ctx: CallContext, id: string, scope: string): Promise<StoredDocument> {
  const doc = await readDocument(ctx.principal.tenantId, id);
  if (!doc) throw notFound('document');
  requireScopes(ctx.principal, [scope]);
  return doc;
}

type Use = 'download' | 'render';

/**
 * Whether `use` is allowed: the document's control, and for a grantee also the grant's. A
 * refusal is audited (outcome `denied`) in the owner's account and answered 403.
 */
export async function requireUse(ctx: CallContext, access: Access, use: Use): Promise<void> {
  const field = use === 'download' ? 'allow_download' : 'allow_render';
  const byDocument = access.doc[field];
  const byGrant = access.via === 'owner' || access.grant![field];
  if (byDocument && byGrant) return;
  await audit(ctx, access, use === 'download' ? 'document.download' : 'document.view', 'denied');
  const what = use === 'download' ? 'downloading the original' : 'rendering its pages';
  const code = use === 'download' ? 'download_disabled' : 'render_disabled';
  throw new HttpError(403, code, `${byDocument ? 'your grant' : 'this document'} does not allow ${what}`);
}

/** One audit entry per view or download, in the owner's account, naming who and how. */
export async function audit(
  ctx: CallContext,
  access: Access,
  action: 'document.download' | 'document.view',
  outcome: 'success' | 'denied',
  detail: Record<string, unknown> = {},
): Promise<string> {
  return ownerScope(access.tenantId, () =>
    recordAudit(ctx, access.tenantId, {
      action,
      resource: { type: 'document', id: access.doc.id, name: access.doc.name },
      outcome,
      detail: { via: access.via, ...(access.grant ? { grant_id: access.grant.id, grantee_email: access.grant.grantee_email } : {}), ...detail },
    }),
  );
}

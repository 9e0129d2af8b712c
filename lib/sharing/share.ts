import type { CallContext } from '../auth/principal.js';
import { requireScopes } from '../auth/scopes.js';
import { commit } from '../audit/audit.js';
import { badRequest, conflict, notFound } from '../core/errors.js';
import { newId, nowIso } from '../ids.js';
import { recipientOf, shareReadPath } from './access.js';
import { readHead, typeOrNotFound } from './heads.js';
import { getShare, shareDeletes, shareItems, sharedWith, sharesOf, type Share } from './store/shares.js';
import { tableName } from '../store/client.js';
import { actorName } from '../resources/store.js';
import { TxConditionFailed } from '../store/tx.js';
import type { CreateShareBody } from './schemas.js';

/**
 * Types whose update route honours a `write` share. A write share of any other type is
 * refused (400) rather than granted and silently ignored.
 */
const WRITE_SHARE_TYPES: ReadonlySet<string> = new Set(['secret']);

const shareView = (s: Share) => ({
  id: s.id,
  type: s.type,
  resource_id: s.resource_id,
  resource_name: s.resource_name,
  shared_with_email: s.shared_with_email,
  permission: s.permission,
  created_at: s.created_at,
  created_by: s.created_by,
});

/**
 * Shares one of the caller's resources with a user of any account. The caller must be able to
 * read it: it must be in the caller's account (404 otherwise, like any other account's
 * resource) and the caller must hold the type's read scope (403).
 */
export async function createShare(ctx: CallContext, type: string, id: string, body: CreateShareBody) {
  const rt = typeOrNotFound(type);
  const tid = ctx.principal.tenantId;
  const head = await readHead(tid, type, id);
  if (!head) throw notFound(type.replace(/_/g, ' '));
  requireScopes(ctx.principal, rt.scopes.read);
  if (type === 'container') {
    throw badRequest('a container is not shared: share the resources in it', [{ path: 'params.type', message: 'containers cannot be shared' }]);
  }
  if (!shareReadPath(type, id)) {
    // refused rather than granted and unreadable: no read route of this type honours shares yet
    throw badRequest(`a ${type.replace(/_/g, ' ')} cannot be shared yet: its read route does not honour shares`, [
      { path: 'params.type', message: 'not shareable' },
    ]);
  }
  if (body.permission === 'write') {
    if (!WRITE_SHARE_TYPES.has(type)) {
      throw badRequest(`write shares are supported for: ${[...WRITE_SHARE_TYPES].join(', ')}`, [
        { path: 'body.permission', message: `write is not supported for ${type}` },
      ]);
    }
    requireScopes(ctx.principal, rt.scopes.write);
  }
  if (body.shared_with_email === recipientOf(ctx)) {
    throw badRequest('a resource cannot be shared with its owner', [{ path: 'body.shared_with_email', message: 'the caller itself' }]);
  }
  const share: Share = {
    id: newId(),
    type,
    resource_id: id,
    resource_name: head.record.name,
    owner_tenant_id: tid,
    shared_with_email: body.shared_with_email,
    permission: body.permission,
    created_at: nowIso(),
    created_by: actorName(ctx),
  };
  const items = [
    ...shareItems(share),
    // the resource must still be this one when the share lands
    { ConditionCheck: { TableName: tableName(), Key: head.key, ConditionExpression: 'id = :id', ExpressionAttributeValues: { ':id': id } } },
  ];
  try {
    await commit(ctx, tid, items, {
      action: 'share.create',
      resource: { type, id, name: head.record.name },
      detail: { share_id: share.id, shared_with_email: share.shared_with_email, permission: share.permission },
      event: {
        type: 'share.created',
        data: { share_id: share.id, type, resource_id: id, shared_with_email: share.shared_with_email, permission: share.permission },
      },
    });
  } catch (error) {
    if (error instanceof TxConditionFailed) {
      if (error.index === 2)
        throw conflict(`the ${type.replace(/_/g, ' ')} is already shared with ${share.shared_with_email}; revoke that share first`, 'already_exists');
      if (error.index === 3) throw notFound(type.replace(/_/g, ' '));
      if (error.conflict) throw conflict('the share is being created concurrently', 'conflict');
    }
    throw error;
  }
  return shareView(share);
}

export async function listShares(ctx: CallContext, type: string, id: string) {
  typeOrNotFound(type);
  const tid = ctx.principal.tenantId;
  if (!(await readHead(tid, type, id))) throw notFound(type.replace(/_/g, ' '));
  const shares = (await sharesOf(tid, type, id)).map(shareView);
  return { shares, total: shares.length };
}

/** Revokes a share: its three items go in one transaction, so the recipient's next read fails. */
export async function revokeShare(ctx: CallContext, shareId: string) {
  const tid = ctx.principal.tenantId;
  const share = await getShare(tid, shareId);
  if (!share) throw notFound('share');
  try {
    await commit(ctx, tid, shareDeletes(share), {
      action: 'share.revoke',
      resource: { type: share.type, id: share.resource_id, name: share.resource_name },
      detail: { share_id: share.id, shared_with_email: share.shared_with_email },
      event: {
        type: 'share.revoked',
        data: { share_id: share.id, type: share.type, resource_id: share.resource_id, shared_with_email: share.shared_with_email },
      },
    });
  } catch (error) {
    if (error instanceof TxConditionFailed && error.index === 0) throw notFound('share');
    throw error;
  }
  return { ...shareView(share), revoked_at: nowIso() };
}

/**
 * What other users shared with the caller's user (the e-mail its credential acts for; a
 * credential without a user has no shares). The route's scope check is the handler's: the
 * share is the permission, so no scope is needed to list one's own shares (metadata only;
 * values are read through each type's GET route, by id: `read_path`).
 */
export async function listSharedWithMe(ctx: CallContext, page: { limit: number; offset: number }) {
  const email = recipientOf(ctx);
  const all = email ? await sharedWith(email) : [];
  const shares = all.slice(page.offset, page.offset + page.limit).map((s) => ({
    ...shareView(s),
    owner_tenant_id: s.owner_tenant_id,
    read_path: shareReadPath(s.type, s.resource_id) ?? null,
  }));
  return { shared_with: email, shares, total: shares.length };
}

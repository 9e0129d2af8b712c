import type { CallContext } from '../auth/principal.js';
import { commit, type Change } from '../audit/audit.js';
import { badRequest, conflict, notFound } from '../core/errors.js';
import { newId, nowIso } from '../ids.js';
import { tableName } from '../store/client.js';
import { keys } from '../store/keys.js';
import { queryAll } from '../store/pagination.js';
import { actorName } from '../resources/store.js';
import { TxConditionFailed, type TxItem } from '../store/tx.js';
import { granteeOf, ownDocument, READ_SCOPE, WRITE_SCOPE } from './access.js';
import { type Grant, GrantItem, grantView, readGrant } from './store.js';
import type { GrantBody } from './schemas.js';

/**
 * Grants on a document: a user (e-mail) of any account may read it until `expires_at`, and
 * download or render it as the grant allows (never more than the document allows). The
 * owner's grant item and the grantee's lookup are written and deleted in one transaction;
 * the grantee's every request reads the lookup consistently, so a revocation applies to the
 * next request. One live grant per grantee and document (a second is a 409; an expired one
 * is replaced). The lookup carries a TTL a day after expiry.
 */
const MAX_LISTED = 1000;
const TTL_GRACE_SECONDS = 24 * 3600;

export async function createGrant(ctx: CallContext, documentId: string, body: GrantBody) {
  const doc = await ownDocument(ctx, documentId, WRITE_SCOPE);
  if (body.grantee_email === granteeOf(ctx)) {
    throw badRequest('a document is not granted to its owner', [{ path: 'body.grantee_email', message: 'the caller itself' }]);
  }
  const tid = ctx.principal.tenantId;
  const grant: Grant = {
    id: newId(),
    document_id: documentId,
    document_name: doc.name,
    owner_tenant_id: tid,
    grantee_email: body.grantee_email,
    expires_at: body.expires_at,
    allow_download: body.allow_download,
    allow_render: body.allow_render,
    created_at: nowIso(),
    created_by: actorName(ctx),
  };
  const ttl = Math.floor(Date.parse(grant.expires_at) / 1000) + TTL_GRACE_SECONDS;
  await commitOrRefuse(
    ctx,
    tid,
    [
      {
        Put: {
          TableName: tableName(),
          Item: { ...grant, ...keys.documentGrant(tid, documentId, grant.id) },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      {
        Put: {
          TableName: tableName(),
          Item: { ...grant, ...keys.documentGrantee(grant.grantee_email, documentId), ttl },
          ConditionExpression: 'attribute_not_exists(pk) OR expires_at <= :now',
          ExpressionAttributeValues: { ':now': grant.created_at },
        },
      },
      {
        ConditionCheck: {
          TableName: tableName(),
          Key: keys.document(tid, documentId),
          ConditionExpression: 'id = :id',
          ExpressionAttributeValues: { ':id': documentId },
        },
      },
    ],
    {
      action: 'document.grant',
      resource: { type: 'document', id: documentId, name: doc.name },
      detail: {
        grant_id: grant.id,
        grantee_email: grant.grantee_email,
        expires_at: grant.expires_at,
        allow_download: grant.allow_download,
        allow_render: grant.allow_render,
      },
      event: {
        type: 'document.grant_created',
        data: { id: documentId, name: doc.name, grant_id: grant.id, grantee_email: grant.grantee_email, expires_at: grant.expires_at },
      },
    },
    [
      undefined,
      conflict(`the document is already granted to ${grant.grantee_email}; revoke that grant first`, 'already_exists'),
      notFound('document'),
    ],
  );
  return grantView(grant);
}

export async function listGrants(ctx: CallContext, documentId: string) {
  await ownDocument(ctx, documentId, READ_SCOPE);
  const items = await queryAll({ pk: keys.tenant(ctx.principal.tenantId).pk, sk: { prefix: keys.documentGrantPrefix(documentId) } }, MAX_LISTED);
  const now = new Date();
  const grants = items
    .map((i) => GrantItem.parse(i))
    .sort((a, b) => b.id.localeCompare(a.id))
    .map((g) => grantView(g, now));
  return { grants, total: grants.length };
}

export async function revokeGrant(ctx: CallContext, documentId: string, grantId: string) {
  const doc = await ownDocument(ctx, documentId, WRITE_SCOPE);
  const tid = ctx.principal.tenantId;
  const grant = await readGrant(tid, documentId, grantId);
  if (!grant) throw notFound('grant');
  await commitOrRefuse(
    ctx,
    tid,
    [
      { Delete: { TableName: tableName(), Key: keys.documentGrant(tid, documentId, grantId), ConditionExpression: 'attribute_exists(pk)' } },
      {
        // the lookup goes unless a newer grant (after this one expired) replaced it
        Delete: {
          TableName: tableName(),
          Key: keys.documentGrantee(grant.grantee_email, documentId),
          ConditionExpression: 'attribute_not_exists(pk) OR id = :id',
          ExpressionAttributeValues: { ':id': grantId },
        },
      },
    ],
    {
      action: 'document.grant_revoke',
      resource: { type: 'document', id: documentId, name: doc.name },
      detail: { grant_id: grantId, grantee_email: grant.grantee_email },
      event: { type: 'document.grant_revoked', data: { id: documentId, name: doc.name, grant_id: grantId, grantee_email: grant.grantee_email } },
    },
    [notFound('grant')],
  );
  return { ...grantView(grant), revoked_at: nowIso() };
}

/** Commits items + audit + event; a failed condition at index i is `refusals[i]`, else a concurrent change (409). */
async function commitOrRefuse(
  ctx: CallContext,
  tenantId: string,
  items: TxItem[],
  change: Change,
  refusals: readonly (Error | undefined)[],
): Promise<void> {
  try {
    await commit(ctx, tenantId, items, change);
  } catch (error) {
    if (!(error instanceof TxConditionFailed)) throw error;
    throw refusals[error.index] ?? conflict('the document or its grants changed concurrently; retry');
  }
}

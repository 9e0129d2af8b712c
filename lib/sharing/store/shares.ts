import * as z from 'zod/v4';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../../store/client.js';
import { entity, nullable } from '../../store/entity.js';
import { keys } from '../../store/keys.js';
import { queryAll } from '../../store/pagination.js';
import type { TxItem } from '../../store/tx.js';

/**
 * Shares: one resource of one account shared with a user (an e-mail address) of any account.
 * Three items, written and deleted in one transaction:
 *
 * - `T#<owner>` / `SHARE#<type>#<resource id>#<share id>`: the share, listed per resource;
 * - `T#<owner>` / `SHAREID#<share id>`: finds it by id (revocation);
 * - `SHAREDWITH#<email>` / `<type>#<resource id>`: the recipient's lookup, holding the owner's
 *   tenant id. A request of the recipient reads it with a consistent GetItem, so a revocation
 *   (which deletes it) takes effect on the very next request. Its key makes a resource
 *   shareable at most once with one recipient (a second share is a 409).
 */
export const PERMISSIONS = ['read', 'write'] as const;
export type Permission = (typeof PERMISSIONS)[number];

export interface Share {
  readonly id: string;
  readonly type: string;
  readonly resource_id: string;
  /** The resource's name when it was shared. */
  readonly resource_name: string;
  readonly owner_tenant_id: string;
  readonly shared_with_email: string;
  readonly permission: Permission;
  readonly created_at: string;
  readonly created_by: string | null;
}

const ShareItem = entity(
  'share',
  z.object({
    id: z.string(),
    type: z.string(),
    resource_id: z.string(),
    resource_name: z.string(),
    owner_tenant_id: z.string(),
    shared_with_email: z.string(),
    permission: z.enum(PERMISSIONS),
    created_at: z.string(),
    created_by: nullable(z.string()),
  }),
);
const toShare = (item: Record<string, unknown>): Share => ShareItem.parse(item);

/** The items of a new share (all conditional on not existing yet; index 2 is the recipient item). */
export function shareItems(share: Share): TxItem[] {
  const t = share.owner_tenant_id;
  return [
    {
      Put: {
        TableName: tableName(),
        Item: { ...keys.share(t, share.type, share.resource_id, share.id), ...share },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    {
      Put: {
        TableName: tableName(),
        Item: { ...keys.shareRef(t, share.id), id: share.id, type: share.type, resource_id: share.resource_id },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    {
      Put: {
        TableName: tableName(),
        Item: { ...keys.sharedWith(share.shared_with_email, share.type, share.resource_id), ...share },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
  ];
}

/** The deletes of a revocation (the share itself must still exist: index 0). */
export function shareDeletes(share: Share): TxItem[] {
  const t = share.owner_tenant_id;
  return [
    { Delete: { TableName: tableName(), Key: keys.share(t, share.type, share.resource_id, share.id), ConditionExpression: 'attribute_exists(pk)' } },
    { Delete: { TableName: tableName(), Key: keys.shareRef(t, share.id) } },
    {
      Delete: {
        TableName: tableName(),
        Key: keys.sharedWith(share.shared_with_email, share.type, share.resource_id),
        ConditionExpression: 'attribute_not_exists(pk) OR id = :id',
        ExpressionAttributeValues: { ':id': share.id },
      },
    },
  ];
}

/** A share of the owner's account by id (consistent reads). */
export async function getShare(ownerTenantId: string, shareId: string): Promise<Share | undefined> {
  const ref = await db().send(new GetCommand({ TableName: tableName(), Key: keys.shareRef(ownerTenantId, shareId), ConsistentRead: true }));
  if (!ref.Item) return undefined;
  const out = await db().send(
    new GetCommand({
      TableName: tableName(),
      Key: keys.share(ownerTenantId, ref.Item.type as string, ref.Item.resource_id as string, shareId),
      ConsistentRead: true,
    }),
  );
  return out.Item ? toShare(out.Item) : undefined;
}

/** The share of one resource with one recipient, if any (the recipient's consistent lookup). */
export async function shareFor(email: string, type: string, resourceId: string): Promise<Share | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.sharedWith(email, type, resourceId), ConsistentRead: true }));
  return out.Item ? toShare(out.Item) : undefined;
}

/** At most this many shares are listed per resource or per recipient. */
const MAX_LISTED_SHARES = 1000;

/** The shares of one resource, newest first. */
export async function sharesOf(ownerTenantId: string, type: string, resourceId: string): Promise<Share[]> {
  const items = await queryAll({ pk: keys.tenant(ownerTenantId).pk, sk: { prefix: keys.sharePrefix(type, resourceId) } }, MAX_LISTED_SHARES);
  return items.map(toShare).sort((a, b) => (a.id < b.id ? 1 : -1));
}

/** Everything shared with one e-mail address, by type then resource id. */
export async function sharedWith(email: string): Promise<Share[]> {
  return (await queryAll({ pk: keys.sharedWithPk(email) }, MAX_LISTED_SHARES)).map(toShare);
}

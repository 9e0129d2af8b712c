import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { conflict, notFound } from '../core/errors.js';
import { db, tableName } from './client.js';
import { keys } from './keys.js';
import { TxConditionFailed, type TxItem } from './tx.js';

/**
 * Container membership, kept in the same transaction as every write that places a resource
 * in a container, moves it, renames it or deletes it (lib/resources/store.ts and the generic
 * secret's service call this):
 *
 * - a member item `CMEMBER#<container id>#<name>` → {type, id}: the resource's key inside
 *   the container (`GET /api/v1/s/{container}/{key}`). A name is unique within a container
 *   across types (a second resource with the same name there is a 409 `already_exists`);
 * - a counter item `CCOUNT#<container id>` (`n`), added to when a resource enters the
 *   container and subtracted from when it leaves. Deleting a container conditions on
 *   `n = 0` in its own transaction, so a resource placed concurrently makes the delete fail
 *   (409) instead of leaving an orphan; entering a container condition-checks its head, so a
 *   container deleted concurrently makes the write fail (404).
 */
interface Placement {
  readonly type: string;
  readonly id: string;
  readonly name: string;
  readonly container_id: string | null;
}

/** Positions (in the caller's item list) of the items whose condition may fail; -1 when absent. */
interface PlacementIndexes {
  readonly containerIndex: number;
  readonly memberIndex: number;
}

/**
 * Appends to `items` what moving a resource from `before` to `after` needs (either may be
 * null: create, delete), and returns where the conditional items landed.
 */
export function pushMembership(tenantId: string, items: TxItem[], before: Placement | null, after: Placement | null): PlacementIndexes {
  const from = before?.container_id ?? null;
  const to = after?.container_id ?? null;
  let containerIndex = -1;
  let memberIndex = -1;
  if (from && to && from === to && before!.name === after!.name) return { containerIndex, memberIndex };
  if (from) {
    items.push({ Delete: { TableName: tableName(), Key: keys.containerMember(tenantId, from, before!.name) } });
    if (from !== to) {
      items.push({
        Update: {
          TableName: tableName(),
          Key: keys.containerCount(tenantId, from),
          UpdateExpression: 'ADD n :d',
          ExpressionAttributeValues: { ':d': -1 },
        },
      });
    }
  }
  if (to) {
    if (from !== to) {
      containerIndex =
        items.push({
          ConditionCheck: { TableName: tableName(), Key: keys.resource(tenantId, 'container', to), ConditionExpression: 'attribute_exists(pk)' },
        }) - 1;
      items.push({
        Update: {
          TableName: tableName(),
          Key: keys.containerCount(tenantId, to),
          UpdateExpression: 'ADD n :d',
          ExpressionAttributeValues: { ':d': 1 },
        },
      });
    }
    memberIndex =
      items.push({
        Put: {
          TableName: tableName(),
          Item: { ...keys.containerMember(tenantId, to, after!.name), type: after!.type, id: after!.id, name: after!.name, container_id: to },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      }) - 1;
  }
  return { containerIndex, memberIndex };
}

/** Maps a failed membership condition to its status: a missing container 404, a taken name 409. */
export function membershipFailure(error: unknown, at: PlacementIndexes, after: Placement | null): void {
  if (!(error instanceof TxConditionFailed)) return;
  if (error.index >= 0 && error.index === at.containerIndex) throw notFound('container');
  if (error.index >= 0 && error.index === at.memberIndex) {
    throw conflict(`a resource named "${after?.name}" already exists in container ${after?.container_id}`, 'already_exists');
  }
}

interface Member {
  readonly type: string;
  readonly id: string;
  readonly name: string;
}

/** The resource a key names inside a container, if any (consistent read). */
export async function findMember(tenantId: string, containerId: string, name: string): Promise<Member | undefined> {
  const out = await db().send(
    new GetCommand({ TableName: tableName(), Key: keys.containerMember(tenantId, containerId, name), ConsistentRead: true }),
  );
  if (!out.Item) return undefined;
  return { type: out.Item.type as string, id: out.Item.id as string, name: out.Item.name as string };
}

/** How many resources a container holds (consistent read). */
export async function memberCount(tenantId: string, containerId: string): Promise<number> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.containerCount(tenantId, containerId), ConsistentRead: true }));
  return Number(out.Item?.n ?? 0);
}

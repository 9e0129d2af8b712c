import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { CallContext } from '../auth/principal.js';
import { commit, type Change } from '../audit/audit.js';
import { conflict } from '../core/errors.js';
import { db, tableName } from '../store/client.js';
import { keys } from '../store/keys.js';
import { queryPage, type Item } from '../store/pagination.js';
import { TxConditionFailed, type TxItem } from '../store/tx.js';

/**
 * The item plumbing of the small stores (federation, S/KEY, time-locks): one item per record in the tenant
 * partition (lib/store/keys.ts), read consistently, listed a page at a time through
 * lib/store/pagination.ts, and changed with an optimistic `version` condition in one
 * transaction with its audit entry and outbox event (lib/audit/audit.ts).
 */
export interface Key {
  readonly pk: string;
  readonly sk: string;
}

export async function readItem(key: Key): Promise<Item | undefined> {
  return (await db().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }))).Item;
}

export async function listItems(
  tenantId: string,
  prefix: string,
  page: { limit: number; offset: number; cursor?: string | undefined },
  projection: readonly string[],
): Promise<{ items: Item[]; nextCursor?: string }> {
  return queryPage<Item>({
    pk: keys.tenant(tenantId).pk,
    prefix,
    limit: page.limit,
    offset: page.cursor ? 0 : page.offset,
    ...(page.cursor ? { cursor: page.cursor } : {}),
    projection,
    newestFirst: true,
  });
}

/** A new item (refused when the key exists). */
export const putNew = (key: Key, fields: Record<string, unknown>): TxItem => ({
  Put: { TableName: tableName(), Item: { ...fields, ...key }, ConditionExpression: 'attribute_not_exists(pk)' },
});

/** A replacement of an item still at `version`. */
export const putAt = (key: Key, fields: Record<string, unknown>, version: number): TxItem => ({
  Put: {
    TableName: tableName(),
    Item: { ...fields, ...key },
    ConditionExpression: 'attribute_exists(pk) AND version = :v',
    ExpressionAttributeValues: { ':v': version },
  },
});

/** A delete of an item still at `version`. */
export const deleteAt = (key: Key, version: number): TxItem => ({
  Delete: {
    TableName: tableName(),
    Key: key,
    ConditionExpression: 'attribute_exists(pk) AND version = :v',
    ExpressionAttributeValues: { ':v': version },
  },
});

/** Commits items + audit + event; a failed condition is a concurrent change (409) unless `onFailed` maps it. */
export async function commitChange(
  ctx: CallContext,
  items: TxItem[],
  change: Change,
  onFailed?: (index: number) => Error | undefined,
): Promise<void> {
  try {
    await commit(ctx, ctx.principal.tenantId, items, change);
  } catch (error) {
    if (error instanceof TxConditionFailed) {
      throw onFailed?.(error.index) ?? conflict('the record was changed concurrently; read it again before retrying');
    }
    throw error;
  }
}

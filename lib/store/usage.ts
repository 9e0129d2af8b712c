import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.js';
import { keys, meterPk, tenantPk } from './keys.js';
import { queryAll } from './pagination.js';
import { mergeShards } from './shards.js';
import { transact, TxConditionFailed } from './tx.js';
import { HttpError } from '../core/errors.js';
import { admitted } from '../core/admission.js';

export const today = (at = new Date()) => at.toISOString().slice(0, 10);

/**
 * Requests per day for the last `days` days, oldest first (the shards of a day summed:
 * keys.usageDay): one Query of the account's metering partition `METER#<tid>`.
 */
export async function requestsByDay(tenantId: string, days: number): Promise<{ day: string; requests: number }[]> {
  // the count includes the request reading it: read after its own count (the gate's write) landed
  await admitted();
  const from = today(new Date(Date.now() - (days - 1) * 86400_000));
  // `USAGE#<today>#<n>` sorts after `USAGE#<today>` and before `USAGE#<today>~`
  const items = await queryAll({ pk: meterPk(tenantId), sk: { between: [`${keys.usagePrefix}${from}`, `${keys.usagePrefix}${today()}~`] } });
  const byDay = new Map<string, number>();
  for (const i of items) {
    const day = (i.sk as string).slice(keys.usagePrefix.length, keys.usagePrefix.length + 10);
    byDay.set(day, (byDay.get(day) ?? 0) + Number(i.requests ?? 0));
  }
  return [...byDay].map(([day, requests]) => ({ day, requests }));
}

/**
 * The one-off migration of a table written before the metering partition (docs/capacity.md,
 * "Existing tables"): every account's usage items still under `T#<tid>` (same sort keys,
 * `USAGE#<day>[#<n>]`) move to `METER#<tid>`. Each move is one transaction: the old item's
 * count is added to the new item (which the new release may be counting on already) and the
 * old item deleted, on condition that it still holds that count; a changed item is read again,
 * a vanished one skipped. So a run may be repeated or interrupted, alongside traffic (rerun
 * it once no container of the earlier release is left). The rate-limit bucket state is not
 * carried: a bucket starts full in the new partition. Accounts are found through the TENANTS
 * listing (run `operator:migrate-shards` first on a table older than the shards).
 */
export async function moveUsageToMeter(): Promise<{ items: number; requests: number }> {
  const moved = { items: 0, requests: 0 };
  const read = (key: { pk: string; sk: string }) =>
    db().send(
      new GetCommand({
        TableName: tableName(),
        Key: key,
        ProjectionExpression: 'requests, #ttl',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ConsistentRead: true,
      }),
    );
  for await (const tenant of mergeShards(keys.tenantIndexPks, {})) {
    const tid = (tenant.pk as string).slice(tenantPk('').length);
    for (const found of await queryAll({ pk: tenantPk(tid), sk: { prefix: keys.usagePrefix }, projection: ['requests', 'ttl'] })) {
      const from = { pk: tenantPk(tid), sk: found.sk as string };
      let item: Record<string, unknown> | undefined = found;
      for (let attempt = 0; item && attempt < 5; attempt++) {
        const counted = item.requests !== undefined;
        const n = Number(item.requests ?? 0);
        const ttl = item.ttl === undefined ? {} : { ':ttl': item.ttl };
        try {
          await transact([
            {
              Update: {
                TableName: tableName(),
                Key: { pk: meterPk(tid), sk: from.sk },
                UpdateExpression: `ADD requests :n${item.ttl === undefined ? '' : ' SET #ttl = if_not_exists(#ttl, :ttl)'}`,
                ...(item.ttl === undefined ? {} : { ExpressionAttributeNames: { '#ttl': 'ttl' } }),
                ExpressionAttributeValues: { ':n': n, ...ttl },
              },
            },
            {
              Delete: {
                TableName: tableName(),
                Key: from,
                ConditionExpression: counted ? 'requests = :n' : 'attribute_exists(pk) AND attribute_not_exists(requests)',
                ...(counted ? { ExpressionAttributeValues: { ':n': n } } : {}),
              },
            },
          ]);
          moved.items++;
          moved.requests += n;
          item = undefined;
        } catch (error) {
          // counted or removed meanwhile: read it again (gone: nothing left to move)
          if (!(error instanceof TxConditionFailed)) throw error;
          item = (await read(from)).Item;
        }
      }
    }
  }
  return moved;
}

/** Counters kept in the same transactions as the creates and deletes they count. */
interface Counters {
  readonly secrets: number;
  readonly api_keys: number;
  /** Active enrolled agent devices (quota max_devices). */
  readonly devices: number;
  /** Webhook subscriptions (quota max_webhooks). */
  readonly webhooks: number;
}

export async function getCounters(tenantId: string): Promise<Counters> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.counters(tenantId), ConsistentRead: true }));
  return {
    secrets: Number(out.Item?.secrets ?? 0),
    api_keys: Number(out.Item?.api_keys ?? 0),
    devices: Number(out.Item?.devices ?? 0),
    webhooks: Number(out.Item?.webhooks ?? 0),
  };
}

/**
 * A counter change as a transaction item. An increment is conditional on the quota, so a
 * create over quota fails inside the same transaction that would have counted it.
 */
/**
 * The one answer to a create over quota: 403 `quota_exceeded` (a standing limit: retrying
 * does not help, unlike 429 rate limits). Raised when counterAdd's condition fails.
 */
export const quotaExceeded = (limit: number | undefined, what: string) =>
  new HttpError(403, 'quota_exceeded', `quota exceeded: at most ${limit} ${what}`);

export function counterAdd(tenantId: string, counter: keyof Counters, delta: 1 | -1, max?: number) {
  const limited = delta > 0 && max !== undefined;
  return {
    Update: {
      TableName: tableName(),
      Key: keys.counters(tenantId),
      UpdateExpression: 'ADD #c :d',
      ...(limited ? { ConditionExpression: 'attribute_not_exists(#c) OR #c < :max' } : {}),
      ExpressionAttributeNames: { '#c': counter },
      ExpressionAttributeValues: { ':d': delta, ...(limited ? { ':max': max } : {}) },
    },
  };
}

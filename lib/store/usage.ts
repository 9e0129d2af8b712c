import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.js';
import { keys, meterPk } from './keys.js';
import { queryAll } from './pagination.js';
import { HttpError } from '../http/errors.js';
import { admitted } from '../http/admission.js';

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

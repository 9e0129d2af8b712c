import { newId, nowIso } from '../ids.js';
import { keys } from '../store/keys.js';
import { tableName } from '../store/client.js';
import type { TxItem } from '../store/tx.js';
import type { EventType } from './catalogue.js';

/** Outbox events are kept a week; the stream relay moves them to the queue long before. */
const OUTBOX_TTL_SECONDS = 7 * 24 * 3600;

/**
 * An outbox event as a transaction item: it lands with the change or not at all
 * (docs/architecture.md, "Events"). Its insert reaches the relay through the table's
 * stream (lib/events/relay.ts): no index entry, no listing.
 */
export function eventPut(tenantId: string, type: EventType, data: Record<string, unknown>): TxItem {
  const id = newId();
  return {
    Put: {
      TableName: tableName(),
      Item: {
        ...keys.outbox(tenantId, id),
        id,
        type,
        tenant_id: tenantId,
        occurred_at: nowIso(),
        data,
        ttl: Math.floor(Date.now() / 1000) + OUTBOX_TTL_SECONDS,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
}

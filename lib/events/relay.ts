import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { sealRecent } from '../audit/chain.js';
import { logger } from '../http/logger.js';
import { db, tableName } from '../store/client.js';
import { readPage } from '../store/pagination.js';
import type { DeliveryMessage, WebhookEvent } from './delivery.js';
import { subscribed } from './payloads.js';
import { queue } from './queue.js';
import { deliveryQueued, listWebhooks, type Webhook } from './webhooks.js';

/**
 * The outbox relay (docs/architecture.md, "Events"). Changes write their event into the table in the same
 * transaction (lib/events/outbox.ts); the relay reads pending events from the OUTBOX index,
 * oldest first, and for each event and each enabled webhook of the account subscribed to
 * its type (for `webhook.test`: only the webhook under test) records a queued delivery and
 * sends one queue message; then it deletes the outbox item. An event is claimed
 * (`claimed_until`) before it is sent, so concurrent relays do not both send it; a relay
 * that dies between send and delete leaves the claim to lapse and the event is sent again
 * (at-least-once; the worker drops a delivery already done). Events of accounts without
 * webhooks are deleted without a claim.
 */
const CLAIM_MS = 60_000;

interface OutboxKey {
  readonly pk: string;
  readonly sk: string;
}

async function claim(key: OutboxKey, now: number): Promise<Record<string, unknown> | undefined> {
  try {
    const out = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: key,
        UpdateExpression: 'SET claimed_until = :until',
        ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(claimed_until) OR claimed_until < :now)',
        ExpressionAttributeValues: { ':until': now + CLAIM_MS, ':now': now },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return out.Attributes;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw error;
  }
}

const remove = (key: OutboxKey) => db().send(new DeleteCommand({ TableName: tableName(), Key: key }));

function targetsOf(hooks: readonly Webhook[], event: Pick<WebhookEvent, 'type' | 'data'>): Webhook[] {
  if (event.type === 'webhook.test') return hooks.filter((h) => h.id === event.data.webhook_id);
  return hooks.filter((h) => h.enabled && subscribed(h.events, event.type));
}

/** One pass: up to `limit` pending events. Returns how many events and messages it handled. */
async function relayOnce(limit = 200, now = Date.now()): Promise<{ events: number; messages: number }> {
  const page = await readPage({ pk: 'OUTBOX', index: 'gsi1' }, limit);
  const byTenant = new Map<string, OutboxKey[]>();
  for (const i of page.items) {
    const tid = (i.pk as string).slice(2);
    byTenant.set(tid, [...(byTenant.get(tid) ?? []), { pk: i.pk as string, sk: i.sk as string }]);
  }
  let events = 0;
  let messages = 0;
  const q = await queue();
  for (const [tid, refs] of byTenant) {
    const hooks = await listWebhooks(tid);
    for (const ref of refs) {
      if (hooks.length === 0) {
        await remove(ref);
        events++;
        continue;
      }
      const item = await claim(ref, now);
      if (!item) continue;
      const event: WebhookEvent = {
        id: item.id as string,
        type: item.type as string,
        timestamp: item.occurred_at as string,
        tenant_id: tid,
        data: (item.data ?? {}) as Record<string, unknown>,
      };
      for (const hook of targetsOf(hooks, event)) {
        await deliveryQueued(tid, hook.id, event);
        const message: DeliveryMessage = { v: 1, tenant_id: tid, webhook_id: hook.id, event };
        await q.send(JSON.stringify(message));
        messages++;
      }
      await remove(ref);
      events++;
    }
  }
  return { events, messages };
}

/**
 * Drains the outbox and seals recent audit entries, until nothing is pending or the time
 * budget is spent. The AWS relay function and the local runtime's timer both call this.
 */
export async function relayPass(budgetMs = 10_000): Promise<{ events: number; messages: number; sealed: number }> {
  const until = Date.now() + budgetMs;
  const total = { events: 0, messages: 0, sealed: 0 };
  for (;;) {
    const r = await relayOnce();
    total.events += r.events;
    total.messages += r.messages;
    if (r.events === 0 || Date.now() > until) break;
  }
  try {
    total.sealed = await sealRecent();
  } catch (error) {
    logger.warn('audit sealing failed', { error: error as Error });
  }
  return total;
}

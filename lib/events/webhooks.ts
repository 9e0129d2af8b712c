import * as z from 'zod/v4';
import { randomBytes } from 'node:crypto';
import { open, seal } from '../crypto/envelope.js';
import { entity, nullable } from '../store/entity.js';
import { keys, tenantPk } from '../store/keys.js';
import { queryAll } from '../store/pagination.js';
import { type Attempt, type DeliveryStatus, readWebhookItem } from './store.js';

export { type Attempt, claimDelivery, deliveryQueued, markDead, recordAttempt } from './store.js';

/**
 * Webhook subscriptions and their delivery records (one table, tenant partition):
 * - `WEBHOOK#<id>`: url, event patterns, description, enabled, and the Standard Webhooks
 *   signing secret sealed with the account's data key (shown once, at creation);
 * - `WHDLV#<webhook id>#<event id>`: one delivery of one event to one webhook: status
 *   (queued → retrying → succeeded | dead), every attempt (time, status code, latency,
 *   error), the next retry; kept DELIVERY_TTL_DAYS.
 */
export interface Webhook {
  readonly id: string;
  readonly url: string;
  readonly events: string[];
  readonly description: string;
  readonly enabled: boolean;
  readonly created_at: string;
  readonly created_by: string | null;
  readonly updated_at: string;
}

export interface Delivery {
  readonly id: string;
  readonly webhook_id: string;
  readonly event_id: string;
  readonly event_type: string;
  readonly status: DeliveryStatus;
  readonly attempts: Attempt[];
  readonly attempt_count: number;
  readonly next_retry_at: string | null;
  readonly dead_lettered_at: string | null;
  readonly created_at: string;
  readonly updated_at: string;
}

const WebhookItem = entity(
  'webhook',
  z.object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    description: z.string().default(''),
    enabled: z.boolean(),
    created_at: z.string(),
    created_by: nullable(z.string()),
    updated_at: z.string(),
  }),
);
export const toWebhook = (item: Record<string, unknown>): Webhook => WebhookItem.parse(item);

const DeliveryItem = entity(
  'webhook delivery',
  z.object({
    webhook_id: z.string(),
    event_id: z.string(),
    event_type: z.string(),
    status: z.enum(['queued', 'retrying', 'succeeded', 'dead']),
    attempts: z
      .array(
        z.looseObject({
          attempt: z.number(),
          at: z.string(),
          status_code: z.number().nullable(),
          latency_ms: z.number(),
          error: z.string().nullable(),
        }),
      )
      .default([]),
    attempt_count: z.number().default(0),
    next_retry_at: nullable(z.string()),
    dead_lettered_at: nullable(z.string()),
    created_at: z.string(),
    updated_at: z.string(),
  }),
);
export const toDelivery = (item: Record<string, unknown>): Delivery => ({ id: item.event_id as string, ...DeliveryItem.parse(item) });

const secretScope = (tenantId: string, id: string) => ({ tenantId, type: 'webhook', id, version: 1 });

/** A new Standard Webhooks secret: `whsec_` + base64 of 32 random bytes. */
export const newSigningSecret = () => `whsec_${randomBytes(32).toString('base64')}`;
export const sealSigningSecret = (tenantId: string, id: string, secret: string) => seal(secretScope(tenantId, id), secret);

export async function getWebhook(tenantId: string, id: string): Promise<{ webhook: Webhook; sealedSecret: Uint8Array } | undefined> {
  const out = { Item: await readWebhookItem(tenantId, id) };
  return out.Item ? { webhook: toWebhook(out.Item), sealedSecret: out.Item.secret as Uint8Array } : undefined;
}

export async function openSigningSecret(tenantId: string, id: string, sealed: Uint8Array): Promise<string> {
  return (await open(secretScope(tenantId, id), sealed)).toString('utf8');
}

export async function listWebhooks(tenantId: string): Promise<Webhook[]> {
  return (await queryAll({ pk: tenantPk(tenantId), sk: { prefix: keys.webhookPrefix } })).map(toWebhook);
}

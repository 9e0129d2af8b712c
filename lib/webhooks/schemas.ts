import * as z from 'zod/v4';
import { isEventPattern } from '../events/payloads.js';
import { ListPage, Timestamp } from '../schemas.js';

const EventPattern = z.string().max(64).refine(isEventPattern, { message: 'not an event type of the catalogue, a family like secret.*, or *' });

export const CreateWebhookBody = z.strictObject({
  url: z.string().trim().min(1).max(2048),
  events: z.array(EventPattern).min(1).max(50),
  description: z.string().trim().max(500).default(''),
  enabled: z.boolean().default(true),
});
export type CreateWebhookBody = z.infer<typeof CreateWebhookBody>;

export const WebhookParams = z.strictObject({ id: z.uuid() });

export const DeliveriesQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().max(2048).optional(),
});
export type DeliveriesQuery = z.infer<typeof DeliveriesQuery>;

/** POST /{id}/test takes no fields (an empty object or no body). */
export const TestBody = z.strictObject({}).optional();

/* Responses */

const WebhookSchema = z.object({
  id: z.uuid(),
  url: z.string().describe('The delivery URL as normalised at create.'),
  events: z.array(z.string()).describe('Event types or patterns (`secret.*`, `*`) delivered to the URL.'),
  description: z.string(),
  enabled: z.boolean(),
  created_at: Timestamp,
  created_by: z.string().nullable().describe('The user (or `kind:id` of the credential) that created it.'),
  updated_at: Timestamp,
});

export const WebhookList = z.object({ webhooks: z.array(WebhookSchema), total: z.int().min(0) });

export const WebhookCreated = z.object({
  webhook: WebhookSchema.extend({
    signing_secret: z
      .string()
      .regex(/^whsec_/)
      .describe('Standard Webhooks signing secret (`whsec_…`); shown in this response only.'),
  }),
});

const Attempt = z.looseObject({
  attempt: z.int().min(1),
  at: Timestamp,
  status_code: z.int().nullable().describe('The receiver’s HTTP status; null when no answer came.'),
  latency_ms: z.number().min(0),
  error: z.string().nullable(),
});

const DeliverySchema = z.object({
  id: z.string().describe('The event id (one delivery per event and webhook).'),
  webhook_id: z.uuid(),
  event_id: z.string(),
  event_type: z.string(),
  status: z.enum(['queued', 'retrying', 'succeeded', 'dead']),
  attempts: z.array(Attempt),
  attempt_count: z.int().min(0),
  next_retry_at: Timestamp.nullable(),
  dead_lettered_at: Timestamp.nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const DeliveryPage = ListPage('deliveries', DeliverySchema);

export const TestQueued = z.object({
  event_id: z.string().describe('The `webhook.test` event queued for delivery.'),
  webhook_id: z.uuid(),
});

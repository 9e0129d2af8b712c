import * as z from 'zod/v4';
import { isEventPattern } from '../../lib/events/payloads.js';

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

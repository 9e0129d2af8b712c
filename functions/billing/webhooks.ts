import { WebhookEvent, WebhookParams } from '../../lib/billing/schemas.js';
import { receiveEvent } from '../../lib/billing/webhook.js';
import { defineHandler, ok } from '../../lib/http/index.js';

/** POST /webhooks/{payment_provider}: the payment provider's signed events (lib/billing/webhook.ts). */
export const receive = defineHandler({
  params: WebhookParams,
  body: WebhookEvent,
  async handler({ params, rawBody, headers }) {
    return ok(await receiveEvent(params.payment_provider, rawBody, headers['stripe-signature']));
  },
});

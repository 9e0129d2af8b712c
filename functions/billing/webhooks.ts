import { EventReceived, WebhookEvent, WebhookParams } from '../../lib/billing/schemas.js';
import { receiveEvent } from '../../lib/billing/webhook.js';
import { defineHandler, ok } from '../../lib/http/index.js';

/** POST /webhooks/{payment_provider}: the payment provider's signed events (lib/billing/webhook.ts). */
export const receive = defineHandler({
  summary: 'Receive a payment provider event',
  description:
    'For the payment provider only: the event is verified against its signature header (Stripe-Signature) on the raw body and applied once; redeliveries answer `duplicate`, events about nothing tracked `ignored`.',
  responses: { 200: EventReceived },
  errors: ['not_found', 'unauthorized', 'webhook_signature_invalid', 'service_unavailable'],
  params: WebhookParams,
  body: WebhookEvent,
  async handler({ params, rawBody, headers }) {
    return ok(await receiveEvent(params.payment_provider, rawBody, headers['stripe-signature']));
  },
});

import { CancelSubscriptionBody, Checkout, CheckoutBody, SubscriptionAnswer, UpdateSubscriptionBody } from '../../lib/billing/schemas.js';
import { cancelSubscription, startCheckout, updateSubscription } from '../../lib/billing/subscriptions.js';
import { created, defineHandler, ok } from '../../lib/http/index.js';

/** POST /api/v1/billing/checkout: a checkout session of the payment provider for a paid plan. */
export const checkout = defineHandler({
  summary: 'Start a checkout for a paid plan',
  description:
    'A checkout session of the payment provider; the customer pays at `url`, and the plan applies when the provider’s event arrives. Refused when the account already has a subscription.',
  responses: { 201: Checkout },
  errors: ['conflict', 'service_unavailable'],
  body: CheckoutBody,
  async handler({ ctx, body }) {
    return created({ checkout: await startCheckout(ctx, body) });
  },
});

/** POST /api/v1/billing/subscription/update: another paid plan (the quota follows at once). */
export const update = defineHandler({
  summary: 'Change the subscription’s plan',
  description: 'Another paid plan; the quota follows at once.',
  responses: { 200: SubscriptionAnswer },
  errors: ['conflict', 'service_unavailable'],
  body: UpdateSubscriptionBody,
  async handler({ ctx, body }) {
    return ok({ subscription: await updateSubscription(ctx, body.plan) });
  },
});

/** POST /api/v1/billing/subscription/cancel: ends the subscription; the account falls back to the free plan. */
export const cancel = defineHandler({
  summary: 'Cancel the subscription',
  description: 'Ends the subscription; the account falls back to the free plan’s quota.',
  responses: { 200: SubscriptionAnswer },
  errors: ['conflict', 'service_unavailable'],
  body: CancelSubscriptionBody,
  async handler({ ctx }) {
    return ok({ subscription: await cancelSubscription(ctx) });
  },
});

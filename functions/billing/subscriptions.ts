import { CancelSubscriptionBody, CheckoutBody, UpdateSubscriptionBody } from '../../lib/billing/schemas.js';
import { cancelSubscription, startCheckout, updateSubscription } from '../../lib/billing/subscriptions.js';
import { created, defineHandler, ok } from '../../lib/http/index.js';

/** POST /api/v1/billing/checkout: a checkout session of the payment provider for a paid plan. */
export const checkout = defineHandler({
  body: CheckoutBody,
  async handler({ ctx, body }) {
    return created({ checkout: await startCheckout(ctx, body) });
  },
});

/** POST /api/v1/billing/subscription/update: another paid plan (the quota follows at once). */
export const update = defineHandler({
  body: UpdateSubscriptionBody,
  async handler({ ctx, body }) {
    return ok({ subscription: await updateSubscription(ctx, body.plan) });
  },
});

/** POST /api/v1/billing/subscription/cancel: ends the subscription; the account falls back to the free plan. */
export const cancel = defineHandler({
  body: CancelSubscriptionBody,
  async handler({ ctx }) {
    return ok({ subscription: await cancelSubscription(ctx) });
  },
});

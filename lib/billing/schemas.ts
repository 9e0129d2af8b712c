import * as z from 'zod/v4';
import { PAID_PLAN_IDS } from './plans.js';

const PaidPlan = z.enum(PAID_PLAN_IDS, { message: `plan must be one of ${PAID_PLAN_IDS.join(', ')} (GET /api/v1/billing/pricing)` });
const ReturnUrl = z.url({ protocol: /^https?$/, message: 'must be an http(s) URL the customer returns to' }).max(2048);

export const CheckoutBody = z.strictObject({ plan: PaidPlan, success_url: ReturnUrl.optional(), cancel_url: ReturnUrl.optional() });
export const UpdateSubscriptionBody = z.strictObject({ plan: PaidPlan });
export const CancelSubscriptionBody = z.strictObject({}).optional();
/** The provider's event (Stripe's event object); the signature is verified on the raw body, not on this parse. */
export const WebhookEvent = z.looseObject({
  id: z.string().min(1),
  type: z.string().min(1),
  created: z.number().int(),
  data: z.looseObject({ object: z.record(z.string(), z.unknown()) }),
});
export const WebhookParams = z.strictObject({ payment_provider: z.string().min(1).max(64) });

import * as z from 'zod/v4';
import { QuotaSchema } from '../account/schemas.js';
import { PAID_PLAN_IDS, PLANS, type PlanId } from './plans.js';

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

/* Responses */

const PlanSchema = z.object({
  id: z.enum(PLANS.map((p) => p.id) as [PlanId, ...PlanId[]]),
  name: z.string(),
  price: z.object({
    amount: z.int().min(0).describe('Per interval, in the currency’s minor unit (cents).'),
    currency: z.literal('usd'),
    interval: z.literal('month'),
  }),
  quota: z.object({
    max_secrets: z.int().min(0),
    max_api_keys: z.int().min(0),
    max_webhooks: z.int().min(0),
    max_devices: z.int().min(0),
    requests_per_minute: z.int().min(1),
  }),
});
export const Pricing = z.object({ plans: z.array(PlanSchema), total: z.int().min(0) });

export const Checkout = z.object({
  checkout: z.object({
    provider: z.enum(['stripe', 'local']),
    plan: z.enum(PAID_PLAN_IDS),
    session_id: z.string(),
    url: z.string().describe('Where the customer pays.'),
  }),
});

const Outcome = z.enum(['applied', 'duplicate', 'stale', 'ignored']).describe('`applied`, or why nothing changed.');
export const SubscriptionAnswer = z.object({
  subscription: z.object({
    outcome: Outcome,
    plan: z.string().nullable(),
    subscription_status: z.string().describe('The provider’s subscription status (e.g. `active`, `canceled`).'),
    account_status: z.enum(['active', 'suspended']).optional(),
    quota: QuotaSchema.optional().describe('The account’s quota after the change.'),
  }),
});

/** POST /webhooks/{payment_provider}: the acknowledgement of a provider event. */
export const EventReceived = z.object({
  received: z.literal(true),
  event_id: z.string(),
  type: z.string(),
  outcome: Outcome,
  plan: z.string().nullable().optional(),
  subscription_status: z.string().optional(),
});

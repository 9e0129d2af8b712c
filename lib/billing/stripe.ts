import { Agent } from 'node:https';
import Stripe from 'stripe';
import { guardedLookup } from '../events/ssrf.js';
import { outboundTimeoutMs } from '../events/timeouts.js';
import type { PlanId } from './plans.js';
import { planOfPrice, type CheckoutInput, type CheckoutSession, type PaymentProvider, type SubscriptionState } from './provider.js';
import type { PaymentSecrets } from './secrets.js';

/**
 * The Stripe adapter of the payment provider port, on the official SDK (API version pinned by
 * the SDK release: Stripe-Version on every request). Every mutation carries the caller's
 * Idempotency-Key. `httpClient` is for tests: the SDK's fetch client over a recording fetch.
 * Its connections resolve through the destination classifier of every outbound path
 * (lib/events/ssrf.ts): public unicast addresses only.
 */
/** The Stripe API version this adapter is written against (the SDK release's own; sent as Stripe-Version). */
export const STRIPE_API_VERSION = '2026-10-28.endive';

export function stripeProvider(secrets: PaymentSecrets, options: { httpClient?: Stripe.HttpClient } = {}): PaymentProvider {
  const stripe = new Stripe(secrets.secret_key, {
    apiVersion: STRIPE_API_VERSION,
    maxNetworkRetries: 1,
    timeout: outboundTimeoutMs('payment-provider'),
    telemetry: false,
    httpClient:
      options.httpClient ?? Stripe.createNodeHttpClient(new Agent({ keepAlive: true, lookup: guardedLookup({ allowLoopback: false }) as never })),
  });
  const priceOf = (plan: PlanId): string => {
    const price = secrets.prices[plan];
    if (!price) throw new Error(`the payment secret names no price for plan "${plan}"`);
    return price;
  };
  const state = (sub: Stripe.Subscription): SubscriptionState => ({
    id: sub.id,
    customer: typeof sub.customer === 'string' ? sub.customer : sub.customer.id,
    status: sub.status,
    plan: (sub.metadata?.plan as PlanId | undefined) ?? planOfPrice(secrets, sub.items.data[0]?.price.id),
  });
  return {
    name: 'stripe',
    async createCheckout(input: CheckoutInput): Promise<CheckoutSession> {
      const metadata = { tenant_id: input.tenantId, plan: input.plan };
      const session = await stripe.checkout.sessions.create(
        {
          mode: 'subscription',
          line_items: [{ price: priceOf(input.plan), quantity: 1 }],
          client_reference_id: input.tenantId,
          ...(input.customerId ? { customer: input.customerId } : {}),
          metadata,
          subscription_data: { metadata },
          success_url: input.successUrl,
          cancel_url: input.cancelUrl,
        },
        { idempotencyKey: input.idempotencyKey },
      );
      if (!session.url) throw new Error('the provider returned a checkout session without a URL');
      return { id: session.id, url: session.url };
    },
    async updateSubscription(current: SubscriptionState, plan: PlanId, idempotencyKey: string): Promise<SubscriptionState> {
      const sub = await stripe.subscriptions.retrieve(current.id);
      const item = sub.items.data[0];
      if (!item) throw new Error('the subscription has no item');
      const updated = await stripe.subscriptions.update(
        current.id,
        { items: [{ id: item.id, price: priceOf(plan) }], metadata: { plan }, proration_behavior: 'create_prorations' },
        { idempotencyKey },
      );
      return state(updated);
    },
    async cancelSubscription(current: SubscriptionState, idempotencyKey: string): Promise<SubscriptionState> {
      return state(await stripe.subscriptions.cancel(current.id, {}, { idempotencyKey }));
    },
  };
}

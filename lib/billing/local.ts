import { createHash, randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import type { PlanId } from './plans.js';
import type { CheckoutInput, CheckoutSession, PaymentProvider, ProviderEvent, SubscriptionState } from './provider.js';
import type { PaymentSecrets } from './secrets.js';

/**
 * The embedded runtime's payment provider: simulates checkout sessions and subscriptions
 * without a network, and emits events shaped and signed exactly like Stripe's (the SDK's own
 * test-header helper: `Stripe-Signature: t=…,v1=HMAC-SHA256(secret, "t.payload")`), so they
 * go through the same webhook verification as the real provider's. The simulated checkout
 * page is not served: `completeCheckout` plays the customer paying (tests, a developer's
 * script), and the caller POSTs its deliveries to /webhooks/local.
 */
const id = (prefix: string) => `${prefix}_local_${randomBytes(12).toString('hex')}`;
const customerOf = (tenantId: string) => `cus_local_${createHash('sha256').update(tenantId).digest('hex').slice(0, 24)}`;

export function localProvider(): PaymentProvider {
  return {
    name: 'local',
    async createCheckout(_input: CheckoutInput): Promise<CheckoutSession> {
      const session = id('cs');
      return { id: session, url: `https://checkout.local.invalid/pay/${session}` };
    },
    async updateSubscription(current: SubscriptionState, plan: PlanId): Promise<SubscriptionState> {
      return { ...current, plan, status: 'active' };
    },
    async cancelSubscription(current: SubscriptionState): Promise<SubscriptionState> {
      return { ...current, status: 'canceled' };
    },
  };
}

/** One signed delivery: the raw body and its Stripe-Signature header. */
interface SignedDelivery {
  readonly body: string;
  readonly signature: string;
  readonly event: ProviderEvent;
}

/** Signs an event as the provider does (timestamp: now, or `at` epoch seconds). */
export function signEvent(event: ProviderEvent, secrets: Pick<PaymentSecrets, 'webhook_secret'>, at?: number): SignedDelivery {
  const body = JSON.stringify(event);
  const signature = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: secrets.webhook_secret, ...(at ? { timestamp: at } : {}) });
  return { body, signature, event };
}

/** A Stripe-shaped subscription object. */
export function subscriptionObject(s: {
  id: string;
  customer: string;
  status: string;
  plan: PlanId;
  tenantId: string;
  price?: string;
}): Record<string, unknown> {
  return {
    id: s.id,
    object: 'subscription',
    customer: s.customer,
    status: s.status,
    metadata: { tenant_id: s.tenantId, plan: s.plan },
    items: {
      object: 'list',
      data: [{ id: id('si'), object: 'subscription_item', price: { id: s.price ?? `price_local_${s.plan}`, object: 'price' } }],
    },
  };
}

export const providerEvent = (type: string, object: Record<string, unknown>, created = Math.floor(Date.now() / 1000)): ProviderEvent => ({
  id: id('evt'),
  type,
  created,
  data: { object },
});

/**
 * The customer pays for checkout session `sessionId`: the events the provider sends then
 * (checkout.session.completed, customer.subscription.created), signed.
 */
export function completeCheckout(
  session: { id: string; tenantId: string; plan: PlanId },
  secrets: Pick<PaymentSecrets, 'webhook_secret'>,
  created = Math.floor(Date.now() / 1000),
): SignedDelivery[] {
  const customer = customerOf(session.tenantId);
  const subscription = id('sub');
  const metadata = { tenant_id: session.tenantId, plan: session.plan };
  return [
    providerEvent(
      'checkout.session.completed',
      {
        id: session.id,
        object: 'checkout.session',
        mode: 'subscription',
        status: 'complete',
        client_reference_id: session.tenantId,
        customer,
        subscription,
        metadata,
      },
      created,
    ),
    providerEvent(
      'customer.subscription.created',
      subscriptionObject({ id: subscription, customer, status: 'active', plan: session.plan, tenantId: session.tenantId }),
      created,
    ),
  ].map((event) => signEvent(event, secrets));
}

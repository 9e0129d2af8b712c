import Stripe from 'stripe';
import { config } from '../config.js';
import type { PlanId } from './plans.js';
import { paymentSecrets, type PaymentSecrets } from './secrets.js';

/**
 * The payment provider port. Two adapters: Stripe (lib/billing/stripe.ts, on the official
 * SDK) in AWS, and the embedded runtime's local provider (lib/billing/local.ts), which
 * simulates checkout sessions and subscriptions and signs its events exactly like Stripe
 * (so both are verified by one webhook path). Configuration picks one (PAYMENT_PROVIDER).
 */
const PROVIDER_NAMES = ['stripe', 'local'] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

export interface CheckoutSession {
  readonly id: string;
  readonly url: string;
}

/** A subscription as the provider reports it. `created`: the state's time (epoch seconds). */
export interface SubscriptionState {
  readonly id: string;
  readonly customer: string;
  /** The provider's status: active, trialing, past_due, unpaid, canceled, incomplete, incomplete_expired, paused. */
  readonly status: string;
  readonly plan: PlanId | undefined;
}

export interface CheckoutInput {
  readonly tenantId: string;
  readonly plan: PlanId;
  readonly customerId?: string;
  readonly successUrl: string;
  readonly cancelUrl: string;
  readonly idempotencyKey: string;
}

export interface PaymentProvider {
  readonly name: ProviderName;
  createCheckout(input: CheckoutInput): Promise<CheckoutSession>;
  updateSubscription(current: SubscriptionState, plan: PlanId, idempotencyKey: string): Promise<SubscriptionState>;
  cancelSubscription(current: SubscriptionState, idempotencyKey: string): Promise<SubscriptionState>;
}

/** Webhook signatures older (or newer) than this are refused (Stripe's default tolerance). */
const SIGNATURE_TOLERANCE_SECONDS = 300;

/** A verified event (Stripe's event shape; the local provider emits the same). */
export interface ProviderEvent {
  readonly id: string;
  readonly type: string;
  readonly created: number;
  readonly data: { readonly object: Record<string, unknown> };
}

/**
 * Verifies a delivery with the provider's scheme (Stripe-Signature: `t=<unix>,v1=<HMAC-SHA256
 * of "t.payload">`, through the SDK's constructEvent) on the raw body: the event, or null when
 * the signature does not verify or its timestamp is outside the tolerance.
 */
export function verifyEvent(rawBody: string, signature: string, secrets: PaymentSecrets, now?: number): ProviderEvent | null {
  try {
    return Stripe.webhooks.constructEvent(
      rawBody,
      signature,
      secrets.webhook_secret,
      SIGNATURE_TOLERANCE_SECONDS,
      undefined,
      now,
    ) as unknown as ProviderEvent;
  } catch (error) {
    if (error instanceof Stripe.errors.StripeSignatureVerificationError) return null;
    throw error;
  }
}

/** The configured provider's name, or undefined when this deployment has none. */
export const configuredProvider = (): ProviderName | undefined => config().PAYMENT_PROVIDER;

export const loadSecrets = (): Promise<PaymentSecrets> => paymentSecrets(config());

/** The price id of each paid plan and the plan of each price id (from the secret document). */
export function planOfPrice(secrets: PaymentSecrets, priceId: string | undefined): PlanId | undefined {
  const hit = Object.entries(secrets.prices).find(([, price]) => price === priceId);
  return hit?.[0] as PlanId | undefined;
}

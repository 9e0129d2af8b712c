import { setTimeout as sleep } from 'node:timers/promises';
import { auditPut } from '../audit/audit.js';
import { type CallContext, systemContext } from '../auth/principal.js';
import { config } from '../config.js';
import { conflict, HttpError, serviceUnavailable } from '../core/errors.js';
import { nowIso, UUID_RE } from '../ids.js';
import { setTenantQuota } from '../operator/tenants.js';
import { tableName } from '../store/client.js';
import { keys } from '../store/keys.js';
import { getTenant, type Tenant, type TenantStatus } from '../store/tenants.js';
import { transact, TxConditionFailed, type TxItem } from '../store/tx.js';
import { localProvider } from './local.js';
import { FREE_PLAN, planById, type PlanId } from './plans.js';
import {
  configuredProvider,
  loadSecrets,
  planOfPrice,
  type PaymentProvider,
  type ProviderEvent,
  type ProviderName,
  type SubscriptionState,
} from './provider.js';
import type { PaymentSecrets } from './secrets.js';
import { type Billing, billingEventSeen, getBilling } from './store.js';
import { stripeProvider } from './stripe.js';
import { identifyTenant } from '../tenancy/scope.js';

export type { Billing } from './store.js';

/**
 * An account's subscription (docs/api.md, "Billing"): checkout through the payment provider,
 * plan changes and cancellation, and the provider's events. Subscription state drives the
 * account: its plan's quota (written by setTenantQuota, the operator's quota path) and its
 * status (unpaid or paused → suspended; otherwise active). Every state carries its time
 * (`state_at`, epoch seconds: the event's `created`), and an older one never overwrites a
 * newer one; each event is applied once (a conditional mark per event id in the same
 * transaction as the change). Billing lifts only a suspension billing made: an account an
 * operator suspended stays suspended whatever the provider says (`billing_suspended`).
 */
const EVENT_MARK_DAYS = 35;
/** Statuses in which a subscription can be changed or cancelled. */
const LIVE = new Set(['active', 'trialing', 'past_due']);
/** What each subscription status makes of the account. */
const ACCOUNT_STATUS: Readonly<Record<string, TenantStatus>> = { unpaid: 'suspended', paused: 'suspended' };
/** Statuses that end the subscription: the account falls back to the free plan. */
const ENDED = new Set(['canceled', 'incomplete_expired']);

/** The configured provider with its secrets; 503 when this deployment has none. */
async function provider(): Promise<{ provider: PaymentProvider; secrets: PaymentSecrets }> {
  const name = configuredProvider();
  if (!name) throw serviceUnavailable('billing is not configured in this deployment (no payment provider)');
  let secrets: PaymentSecrets;
  try {
    secrets = await loadSecrets();
  } catch (error) {
    throw serviceUnavailable('the payment provider is not reachable', error);
  }
  return { provider: name === 'stripe' ? stripeProvider(secrets) : localProvider(), secrets };
}

/** A provider call; its failures are a 503 (the provider's message is not shown: it may echo request data). */
async function call<T>(what: () => Promise<T>): Promise<T> {
  try {
    return await what();
  } catch (error) {
    if (error instanceof HttpError) throw error;
    throw serviceUnavailable('the payment provider refused or failed the request', error);
  }
}

export interface CheckoutBody {
  readonly plan: PlanId;
  readonly success_url?: string;
  readonly cancel_url?: string;
}

/** Starts a checkout for a paid plan: the provider's session and its URL (the customer pays there). */
export async function startCheckout(ctx: CallContext, body: CheckoutBody) {
  const tenantId = ctx.principal.tenantId;
  const current = await getBilling(tenantId);
  if (current?.subscription_status && LIVE.has(current.subscription_status)) {
    throw conflict('the account already has a subscription; change its plan with POST /api/v1/billing/subscription/update');
  }
  const { provider: p } = await provider();
  const base = config().PUBLIC_BASE_URL ?? 'https://localhost';
  const session = await call(() =>
    p.createCheckout({
      tenantId,
      plan: body.plan,
      ...(current?.customer_id ? { customerId: current.customer_id } : {}),
      successUrl: body.success_url ?? `${base}/billing/success`,
      cancelUrl: body.cancel_url ?? `${base}/billing/cancel`,
      idempotencyKey: `checkout-${ctx.requestId}`,
    }),
  );
  const at = nowIso();
  await transact([
    {
      Update: {
        TableName: tableName(),
        Key: keys.billing(tenantId),
        UpdateExpression: 'SET provider = :p, checkout = :c, updated_at = :at, state_at = if_not_exists(state_at, :zero)',
        ExpressionAttributeValues: { ':p': p.name, ':c': { session_id: session.id, plan: body.plan, created_at: at }, ':at': at, ':zero': 0 },
      },
    },
    auditPut(ctx, tenantId, {
      action: 'billing.checkout',
      resource: { type: 'billing', id: session.id },
      detail: { plan: body.plan, provider: p.name },
    }).item,
  ]);
  return { provider: p.name, plan: body.plan, session_id: session.id, url: session.url };
}

function live(billing: Billing | undefined, provider: ProviderName): SubscriptionState {
  if (!billing?.subscription_id || !billing.customer_id || !billing.subscription_status || !LIVE.has(billing.subscription_status)) {
    throw conflict('the account has no active subscription; start one with POST /api/v1/billing/checkout');
  }
  if (billing.provider !== provider) throw conflict(`the subscription is held by provider "${billing.provider}", not this deployment's`);
  return {
    id: billing.subscription_id,
    customer: billing.customer_id,
    status: billing.subscription_status,
    plan: (billing.plan ?? undefined) as PlanId | undefined,
  };
}

export async function updateSubscription(ctx: CallContext, plan: PlanId) {
  const { provider: p } = await provider();
  const current = live(await getBilling(ctx.principal.tenantId), p.name);
  if (current.plan === plan) throw conflict(`the subscription is already on plan "${plan}"`);
  const next = await call(() => p.updateSubscription(current, plan, `update-${ctx.requestId}`));
  return applyState(ctx, ctx.principal.tenantId, p.name, next, Math.floor(Date.now() / 1000));
}

export async function cancelSubscription(ctx: CallContext) {
  const { provider: p } = await provider();
  const current = live(await getBilling(ctx.principal.tenantId), p.name);
  const next = await call(() => p.cancelSubscription(current, `cancel-${ctx.requestId}`));
  return applyState(ctx, ctx.principal.tenantId, p.name, next, Math.floor(Date.now() / 1000));
}

export type Outcome = 'applied' | 'duplicate' | 'stale' | 'ignored';

/**
 * Writes a subscription state: the plan's quota and the account status through
 * setTenantQuota, the billing state (only if not older than the stored one) and, for an
 * event, its once-only mark, in one transaction. A concurrent writer is retried; a redelivery
 * that lost the race finds the mark and is a duplicate.
 */
async function applyState(
  ctx: CallContext,
  tenantId: string,
  providerName: ProviderName,
  next: SubscriptionState,
  at: number,
  event?: ProviderEvent,
): Promise<{ outcome: Outcome; plan: string | null; subscription_status: string; account_status?: TenantStatus; quota?: Tenant['quota'] }> {
  const ended = ENDED.has(next.status);
  const plan = ended ? FREE_PLAN : planById(next.plan ?? '');
  if (!plan || next.status === 'incomplete') return { outcome: 'ignored', plan: next.plan ?? null, subscription_status: next.status };
  const now = nowIso();
  const wanted = ACCOUNT_STATUS[next.status] ?? 'active';
  const mark: TxItem[] = event
    ? [
        {
          Put: {
            TableName: tableName(),
            Item: {
              ...keys.billingEvent(tenantId, providerName, event.id),
              event_id: event.id,
              type: event.type,
              created: event.created,
              ttl: Math.floor(Date.now() / 1000) + EVENT_MARK_DAYS * 86_400,
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
      ]
    : [];
  const stateItem = (billingSuspended: boolean): TxItem => ({
    Put: {
      TableName: tableName(),
      Item: {
        ...keys.billing(tenantId),
        provider: providerName,
        plan: plan.id,
        subscription_id: next.id,
        customer_id: next.customer,
        subscription_status: next.status,
        state_at: at,
        checkout: null,
        billing_suspended: billingSuspended,
        updated_at: now,
      },
      ConditionExpression: 'attribute_not_exists(pk) OR state_at <= :at',
      ExpressionAttributeValues: { ':at': at },
    },
  });
  const markIndex = event ? 1 : -1;
  const stateIndex = event ? 2 : 1;
  for (let attempt = 0; ; attempt++) {
    if (event) {
      if (await billingEventSeen(tenantId, providerName, event.id)) return { outcome: 'duplicate', plan: plan.id, subscription_status: next.status };
    }
    // an operator's suspension is the operator's to lift: billing suspends and resumes only its own
    // (read on every attempt; an operator's status change landing between this read and the
    // write below is not detected: the tenant update is not conditional on the status)
    const [previous, before] = await Promise.all([getBilling(tenantId), getTenant(tenantId)]);
    const suspendedElsewhere = before?.status === 'suspended' && !previous?.billing_suspended;
    const status = wanted === 'active' && suspendedElsewhere ? undefined : wanted;
    try {
      const tenant = await setTenantQuota(ctx, tenantId, plan.quota, {
        ...(status ? { status } : {}),
        items: [...mark, stateItem(wanted === 'suspended' && !suspendedElsewhere)],
        detail: { billing: { plan: plan.id, subscription_status: next.status, provider: providerName, ...(event ? { event_id: event.id } : {}) } },
      });
      return { outcome: 'applied', plan: plan.id, subscription_status: next.status, account_status: tenant.status, quota: tenant.quota };
    } catch (error) {
      if (!(error instanceof TxConditionFailed)) throw error;
      if (error.index === markIndex) return { outcome: 'duplicate', plan: plan.id, subscription_status: next.status };
      if (error.index === stateIndex) return { outcome: 'stale', plan: plan.id, subscription_status: next.status };
      if (attempt >= 8) throw serviceUnavailable('the account changed concurrently; the provider will redeliver', error);
      await sleep(20 + Math.floor(Math.random() * 40 * (attempt + 1)));
    }
  }
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);
const meta = (o: Record<string, unknown>): Record<string, unknown> =>
  o.metadata && typeof o.metadata === 'object' ? (o.metadata as Record<string, unknown>) : {};

/** What an event says about the subscription, or undefined for events that do not concern it. */
function stateOfEvent(event: ProviderEvent, secrets: PaymentSecrets): { tenantId?: string; state: SubscriptionState } | undefined {
  const o = event.data.object;
  if (event.type === 'checkout.session.completed') {
    const [id, customer] = [str(o.subscription), str(o.customer)];
    if (o.mode !== 'subscription' || !id || !customer) return undefined;
    return {
      tenantId: str(o.client_reference_id) ?? str(meta(o).tenant_id),
      state: { id, customer, status: 'active', plan: str(meta(o).plan) as PlanId | undefined },
    };
  }
  if (!event.type.startsWith('customer.subscription.')) return undefined;
  const [id, customer, status] = [str(o.id), str(o.customer), str(o.status)];
  if (!id || !customer || !status) return undefined;
  const items = (o.items as { data?: { price?: { id?: string } }[] } | undefined)?.data ?? [];
  const plan = (str(meta(o).plan) as PlanId | undefined) ?? planOfPrice(secrets, items[0]?.price?.id);
  return {
    tenantId: str(meta(o).tenant_id),
    state: { id, customer, status: event.type === 'customer.subscription.deleted' ? 'canceled' : status, plan },
  };
}

/** Applies a verified provider event once; events about nothing this service tracks are acknowledged and ignored. */
export async function handleEvent(providerName: ProviderName, event: ProviderEvent, secrets: PaymentSecrets) {
  const found = stateOfEvent(event, secrets);
  const base = { event_id: event.id, type: event.type };
  if (!found?.tenantId || !UUID_RE.test(found.tenantId)) return { ...base, outcome: 'ignored' as Outcome };
  // the verified event names the account: from here on every call uses its tenant session
  // (POST /webhooks/{payment_provider} is a tenant route, lib/routes.ts tenancyOf)
  identifyTenant(found.tenantId);
  const tenant = await getTenant(found.tenantId);
  if (!tenant) return { ...base, outcome: 'ignored' as Outcome };
  // accounts are never deleted, so the one found is there for the update
  const out = await applyState(
    systemContext(tenant, `billing:${providerName}`, { requestId: event.id, sourceIp: null, userAgent: `payment-provider:${providerName}` }),
    tenant.id,
    providerName,
    found.state,
    event.created,
    event,
  );
  return { ...base, outcome: out.outcome, plan: out.plan, subscription_status: out.subscription_status };
}

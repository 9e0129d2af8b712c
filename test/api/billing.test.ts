import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { completeCheckout, providerEvent, signEvent, subscriptionObject } from '../../lib/billing/local.js';
import { PLANS } from '../../lib/billing/plans.js';
import { paymentSecrets, type PaymentSecrets } from '../../lib/billing/secrets.js';
import { api, canary, errorCode, newAccount, rootKey, type TestAccount } from '../helpers/api.js';
import { findLeaks } from '../helpers/leaks.js';

/**
 * Billing through the embedded runtime's local payment provider (PAYMENT_PROVIDER=local):
 * checkout → the provider's signed events at POST /webhooks/local → the plan's quota through
 * the operator's quota path; plan update and cancellation; the webhook's signature check
 * (the stripe SDK's own test-header helper), tolerance, once-only processing under concurrent
 * redelivery, and event-time ordering. The Stripe adapter's HTTP requests are asserted in
 * test/unit/billing-stripe.test.ts.
 */
let acct: TestAccount;
let secrets: PaymentSecrets;
const plan = (id: string) => PLANS.find((p) => p.id === id)!;
const now = () => Math.floor(Date.now() / 1000);

const deliver = (d: { body: string; signature: string }, provider = 'local') =>
  api('POST', `/webhooks/${provider}`, { rawBody: d.body, headers: { 'content-type': 'application/json', 'stripe-signature': d.signature } });

const quotaOf = async (a: TestAccount) => {
  const res = await api('GET', '/api/v1/quotas', { key: a.adminKey });
  expect(res.status, res.text).toBe(200);
  return res.body.data.quota;
};

/** A subscription event of `a` (Stripe's shape), with payment data that must never be stored or logged. */
const subEvent = (a: TestAccount, type: string, o: { status: string; plan: 'team' | 'business'; sub?: string; created?: number }) =>
  providerEvent(
    type,
    {
      ...subscriptionObject({ id: o.sub ?? 'sub_local_fixed', customer: 'cus_local_fixed', status: o.status, plan: o.plan, tenantId: a.tenantId }),
      default_payment_method: {
        card: { brand: 'visa', last4: '4242', fingerprint: canary('card') },
        billing_details: { email: `${canary('payer')}@example.test` },
      },
    },
    o.created,
  );

async function subscribe(a: TestAccount, planId: 'team' | 'business') {
  const res = await api('POST', '/api/v1/billing/checkout', { key: a.adminKey, body: { plan: planId } });
  expect(res.status, res.text).toBe(201);
  const session = res.body.data.checkout;
  for (const d of completeCheckout({ id: session.session_id, tenantId: a.tenantId, plan: planId }, secrets)) {
    const r = await deliver(d);
    expect(r.status, r.text).toBe(200);
    expect(r.body.data.outcome).toBe('applied');
  }
  return session;
}

beforeAll(async () => {
  acct = await newAccount('billing');
  // the local provider's stand-in for the Secrets Manager secret (created on first use, by the runtime or here)
  secrets = await paymentSecrets({
    PAYMENT_SECRET_FILE: join(inject('dataDir'), 'payment', 'local-provider.json'),
    AWS_REGION: 'us-east-1',
    PAYMENT_SECRET_ID: undefined,
  });
});

describe('GET /api/v1/billing/pricing', () => {
  it('is public and lists every plan with its price and quota', async () => {
    const res = await api('GET', '/api/v1/billing/pricing');
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.plans.map((p: { id: string }) => p.id)).toEqual(['free', 'team', 'business']);
    expect(res.body.data.plans[1]).toEqual({
      id: 'team',
      name: 'Team',
      price: { amount: 4900, currency: 'usd', interval: 'month' },
      quota: { max_secrets: 10_000, max_api_keys: 100, max_webhooks: 25, max_devices: 1_000, requests_per_minute: 6_000 },
    });
  });
});

describe('POST /api/v1/billing/checkout', () => {
  it('401 without credentials, 403 without admin:*, 400 for a plan that cannot be bought', async () => {
    expect((await api('POST', '/api/v1/billing/checkout', { body: { plan: 'team' } })).status).toBe(401);
    const res = await api('POST', '/api/v1/billing/checkout', { key: await acct.key(['secrets:read']), body: { plan: 'team' } });
    expect([res.status, errorCode(res)]).toEqual([403, 'insufficient_scope']);
    for (const body of [{ plan: 'free' }, { plan: 'gold' }, {}, { plan: 'team', success_url: 'javascript:alert(1)' }, { plan: 'team', extra: 1 }]) {
      const bad = await api('POST', '/api/v1/billing/checkout', { key: acct.adminKey, body });
      expect([bad.status, errorCode(bad)], JSON.stringify(body)).toEqual([400, 'validation_failed']);
    }
  });

  it('checkout → signed provider events → the plan and its quota; then update, then cancel to the free plan', async () => {
    const a = await newAccount('flow');
    const session = await subscribe(a, 'team');
    expect(session).toMatchObject({ provider: 'local', plan: 'team' });
    expect(session.url).toMatch(/^https:\/\/checkout\.local\.invalid\/pay\/cs_local_/);
    expect(await quotaOf(a)).toMatchObject(plan('team').quota);

    // a second checkout while subscribed is refused
    const again = await api('POST', '/api/v1/billing/checkout', { key: a.adminKey, body: { plan: 'business' } });
    expect([again.status, errorCode(again)]).toEqual([409, 'conflict']);

    const up = await api('POST', '/api/v1/billing/subscription/update', { key: a.adminKey, body: { plan: 'business' } });
    expect(up.status, up.text).toBe(200);
    expect(up.body.data.subscription).toMatchObject({
      outcome: 'applied',
      plan: 'business',
      subscription_status: 'active',
      account_status: 'active',
    });
    expect(await quotaOf(a)).toMatchObject(plan('business').quota);
    const same = await api('POST', '/api/v1/billing/subscription/update', { key: a.adminKey, body: { plan: 'business' } });
    expect([same.status, errorCode(same)]).toEqual([409, 'conflict']);

    const cancel = await api('POST', '/api/v1/billing/subscription/cancel', { key: a.adminKey });
    expect(cancel.status, cancel.text).toBe(200);
    expect(cancel.body.data.subscription).toMatchObject({ outcome: 'applied', plan: 'free', subscription_status: 'canceled' });
    expect(await quotaOf(a)).toMatchObject(plan('free').quota);
    // a former customer checks out again (the provider's customer is named in the session)
    const back = await api('POST', '/api/v1/billing/checkout', {
      key: a.adminKey,
      body: { plan: 'team', success_url: 'https://app.example.test/ok' },
    });
    expect(back.status, back.text).toBe(201);

    // the quota changes are the operator's quota path: audit action tenant.quota, with the billing detail
    const audit = await api('GET', '/api/v1/audit/logs?limit=100', { key: a.adminKey });
    const quotaEntries = audit.body.data.entries.filter((l: { action: string }) => l.action === 'tenant.quota');
    expect(quotaEntries.map((l: { detail: { billing: { plan: string } } }) => l.detail.billing.plan).sort()).toEqual([
      'business',
      'free',
      'team',
      'team',
    ]);
    expect(audit.body.data.entries.some((l: { action: string }) => l.action === 'billing.checkout')).toBe(true);
  });
});

describe('POST /api/v1/billing/subscription/update and /cancel', () => {
  it('401, 403, 400, and 409 without a subscription', async () => {
    for (const path of ['/api/v1/billing/subscription/update', '/api/v1/billing/subscription/cancel']) {
      const body = path.endsWith('update') ? { plan: 'team' } : {};
      expect((await api('POST', path, { body })).status).toBe(401);
      const forbidden = await api('POST', path, { key: await acct.key(['audit:read']), body });
      expect([forbidden.status, errorCode(forbidden)]).toEqual([403, 'insufficient_scope']);
      const bad = await api('POST', path, { key: acct.adminKey, body: { plan: 'nope', x: 1 } });
      expect([bad.status, errorCode(bad)]).toEqual([400, 'validation_failed']);
      const none = await api('POST', path, { key: acct.adminKey, body });
      expect([none.status, errorCode(none)]).toEqual([409, 'conflict']);
    }
  });
});

describe('POST /webhooks/{payment_provider}', () => {
  it('accepts an event signed with the stripe SDK test-header helper; refuses a wrong signature, a stale timestamp, no signature', async () => {
    const a = await newAccount('hook');
    const event = subEvent(a, 'customer.subscription.created', { status: 'active', plan: 'business' });
    const body = JSON.stringify(event);

    const wrong = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: 'whsec_not_the_secret' });
    const r1 = await deliver({ body, signature: wrong });
    expect([r1.status, errorCode(r1)]).toEqual([400, 'webhook_signature_invalid']);

    const stale = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: secrets.webhook_secret, timestamp: now() - 600 });
    const r2 = await deliver({ body, signature: stale });
    expect([r2.status, errorCode(r2)]).toEqual([400, 'webhook_signature_invalid']);

    const tampered = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: secrets.webhook_secret });
    const r3 = await deliver({ body: body.replace('"business"', '"team"'), signature: tampered });
    expect([r3.status, errorCode(r3)]).toEqual([400, 'webhook_signature_invalid']);

    const r4 = await api('POST', '/webhooks/local', { rawBody: body, headers: { 'content-type': 'application/json' } });
    expect([r4.status, errorCode(r4)]).toEqual([401, 'unauthorized']);
    expect(await quotaOf(a)).not.toMatchObject(plan('business').quota);

    const good = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: secrets.webhook_secret });
    const ok = await deliver({ body, signature: good });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.data).toEqual({
      received: true,
      event_id: event.id,
      type: event.type,
      outcome: 'applied',
      plan: 'business',
      subscription_status: 'active',
    });
    expect(await quotaOf(a)).toMatchObject(plan('business').quota);
    // the local provider's own signature is Stripe's scheme: the SDK verifies it
    const local = signEvent(event, secrets);
    expect(Stripe.webhooks.constructEvent(local.body, local.signature, secrets.webhook_secret).id).toBe(event.id);
  });

  it('404 for a provider this deployment does not have', async () => {
    const d = signEvent(providerEvent('ping', {}), secrets);
    for (const provider of ['stripe', 'paypal']) {
      const res = await deliver(d, provider);
      expect([res.status, errorCode(res)], provider).toEqual([404, 'not_found']);
    }
  });

  it('10 concurrent redeliveries of one event change the plan once', async () => {
    const a = await newAccount('redeliver');
    const d = signEvent(subEvent(a, 'customer.subscription.updated', { status: 'active', plan: 'business' }), secrets);
    const results = await Promise.all(Array.from({ length: 10 }, () => deliver(d)));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    const outcomes = results.map((r) => r.body.data.outcome).sort();
    expect(outcomes).toEqual(['applied', ...Array(9).fill('duplicate')]);
    expect(await quotaOf(a)).toMatchObject(plan('business').quota);
    const audit = await api('GET', '/api/v1/audit/logs?limit=100', { key: a.adminKey });
    const changes = audit.body.data.entries.filter(
      (l: { action: string; detail?: { billing?: { event_id?: string } } }) => l.action === 'tenant.quota',
    );
    expect(changes.map((l: { detail: { billing: { event_id: string } } }) => l.detail.billing.event_id)).toEqual([d.event.id]);
  });

  it('orders by event time: an older event arriving late does not undo a newer one; unpaid suspends, active resumes', async () => {
    const a = await newAccount('order');
    const t = now() - 60;
    const newer = signEvent(subEvent(a, 'customer.subscription.updated', { status: 'active', plan: 'business', created: t + 30 }), secrets);
    const older = signEvent(subEvent(a, 'customer.subscription.updated', { status: 'active', plan: 'team', created: t }), secrets);
    expect((await deliver(newer)).body.data.outcome).toBe('applied');
    const late = await deliver(older);
    expect([late.status, late.body.data.outcome]).toEqual([200, 'stale']);
    expect(await quotaOf(a)).toMatchObject(plan('business').quota);

    const unpaid = await deliver(
      signEvent(subEvent(a, 'customer.subscription.updated', { status: 'unpaid', plan: 'business', created: t + 40 }), secrets),
    );
    expect(unpaid.body.data.outcome).toBe('applied');
    expect((await api('GET', '/api/v1/quotas', { key: a.adminKey })).status).toBe(403);
    const paid = await deliver(
      signEvent(subEvent(a, 'customer.subscription.updated', { status: 'active', plan: 'business', created: t + 50 }), secrets),
    );
    expect(paid.body.data.outcome).toBe('applied');
    expect(await quotaOf(a)).toMatchObject(plan('business').quota);

    const deleted = await deliver(
      signEvent(subEvent(a, 'customer.subscription.deleted', { status: 'canceled', plan: 'business', created: t + 55 }), secrets),
    );
    expect(deleted.body.data).toMatchObject({ outcome: 'applied', plan: 'free' });
    expect(await quotaOf(a)).toMatchObject(plan('free').quota);
  });

  it('never lifts a suspension an operator made; lifts only its own', async () => {
    const a = await newAccount('operator-suspended');
    const t = now() - 60;
    const first = signEvent(subEvent(a, 'customer.subscription.updated', { status: 'active', plan: 'team', created: t }), secrets);
    expect((await deliver(first)).body.data.outcome).toBe('applied');
    expect((await api('PATCH', `/api/v1/admin/tenants/${a.tenantId}/suspend`, { key: rootKey() })).status).toBe(200);
    const renewal = await deliver(
      signEvent(subEvent(a, 'customer.subscription.updated', { status: 'active', plan: 'business', created: t + 10 }), secrets),
    );
    expect(renewal.body.data).toMatchObject({ outcome: 'applied', plan: 'business' });
    expect((await api('GET', '/api/v1/quotas', { key: a.adminKey })).status).toBe(403);
    // unpaid, then paid again: still the operator's suspension, still suspended
    for (const [status, dt] of [
      ['unpaid', 20],
      ['active', 30],
    ] as const) {
      const res = await deliver(signEvent(subEvent(a, 'customer.subscription.updated', { status, plan: 'business', created: t + dt }), secrets));
      expect(res.body.data.outcome).toBe('applied');
      expect((await api('GET', '/api/v1/quotas', { key: a.adminKey })).status).toBe(403);
    }
    expect((await api('PATCH', `/api/v1/admin/tenants/${a.tenantId}/activate`, { key: rootKey() })).status).toBe(200);
    expect(await quotaOf(a)).toMatchObject(plan('business').quota);
  });

  it('acknowledges events about nothing it tracks (other types, unknown or foreign accounts) without changes', async () => {
    const cases = [
      providerEvent('invoice.paid', { id: 'in_1', customer: 'cus_x' }),
      providerEvent(
        'customer.subscription.updated',
        subscriptionObject({ id: 'sub_x', customer: 'cus_x', status: 'active', plan: 'team', tenantId: '00000000-0000-7000-8000-000000000000' }),
      ),
      providerEvent(
        'customer.subscription.updated',
        subscriptionObject({ id: 'sub_x', customer: 'cus_x', status: 'active', plan: 'team', tenantId: 'not-a-uuid' }),
      ),
      providerEvent('customer.subscription.updated', { id: 'sub_x', customer: 'cus_x' }),
      // no account reference at all; a plan that cannot be told (no metadata plan, an unknown price, no items)
      providerEvent('customer.subscription.updated', { id: 'sub_x', customer: 'cus_x', status: 'active' }),
      providerEvent('customer.subscription.updated', {
        id: 'sub_x',
        customer: 'cus_x',
        status: 'active',
        metadata: { tenant_id: acct.tenantId },
        items: { data: [{ price: { id: 'price_unknown' } }] },
      }),
      providerEvent('customer.subscription.updated', { id: 'sub_x', customer: 'cus_x', status: 'active', metadata: { tenant_id: acct.tenantId } }),
      providerEvent('checkout.session.completed', {
        id: 'cs_x',
        mode: 'subscription',
        customer: 'cus_x',
        subscription: 'sub_x',
        metadata: { tenant_id: acct.tenantId },
      }),
      providerEvent('checkout.session.completed', { id: 'cs_x', mode: 'payment', client_reference_id: acct.tenantId }),
      providerEvent(
        'customer.subscription.updated',
        subscriptionObject({ id: 'sub_x', customer: 'cus_x', status: 'incomplete', plan: 'team', tenantId: acct.tenantId }),
      ),
    ];
    for (const event of cases) {
      const res = await deliver(signEvent(event, secrets));
      expect([res.status, res.body.data.outcome], event.type).toEqual([200, 'ignored']);
    }
    const notJson = 'not json';
    const res = await deliver({
      body: notJson,
      signature: Stripe.webhooks.generateTestHeaderString({ payload: notJson, secret: secrets.webhook_secret }),
    });
    expect([res.status, errorCode(res)]).toEqual([400, 'invalid_json']);
    const empty = await api('POST', '/webhooks/local', { headers: { 'stripe-signature': 't=1,v1=00' } });
    expect([empty.status, errorCode(empty)]).toEqual([400, 'validation_failed']);
    const notEvent = JSON.stringify({ id: 'evt_1', type: 'x' });
    const shape = await deliver({
      body: notEvent,
      signature: Stripe.webhooks.generateTestHeaderString({ payload: notEvent, secret: secrets.webhook_secret }),
    });
    expect([shape.status, errorCode(shape)]).toEqual([400, 'validation_failed']);
  });
});

afterAll(async () => {
  // the provider's secrets never reach the table or a log line (payment data in events carries canaries: the suite scans for them)
  await new Promise((r) => setTimeout(r, 200));
  const leaks = await findLeaks({
    dynamoEndpoint: inject('dynamoEndpoint'),
    tableName: inject('tableName'),
    logText: readFileSync(inject('logFile'), 'utf8'),
    extra: [secrets.webhook_secret, secrets.secret_key, secrets.webhook_secret.slice('whsec_'.length)],
  });
  expect(leaks).toEqual([]);
});

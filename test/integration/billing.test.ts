import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import Stripe from 'stripe';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey } from '../../lib/auth/api-keys.js';
import { localProvider, signEvent, providerEvent } from '../../lib/billing/local.js';
import { verifyEvent } from '../../lib/billing/provider.js';
import { paymentSecrets } from '../../lib/billing/secrets.js';
import { STRIPE_API_VERSION, stripeProvider } from '../../lib/billing/stripe.js';
import { redactedConfiguration } from '../../lib/diagnostics/health.js';
import { table } from './table.js';
import { testDirectory } from '../helpers/scratch.js';

/**
 * The Stripe adapter's HTTP requests, asserted exactly without a network: the SDK's own fetch
 * HTTP client over a recording fetch that answers as the API does. The payment secret from
 * Secrets Manager (mocked: no engine here) and from the local provider's file. The
 * integrator helpers answer 404 where the deployment has not turned them on (this process's
 * configuration has no MOCK_ROUTES_ENABLED).
 */
interface Recorded {
  method: string;
  url: string;
  headers: Headers;
  form: [string, string][];
}

function recorder(answers: Record<string, unknown>[]) {
  const requests: Recorded[] = [];
  const fetchFn = (async (url: string, init: RequestInit) => {
    requests.push({
      method: String(init.method),
      url,
      headers: new Headers(init.headers as HeadersInit),
      form: [...new URLSearchParams(typeof init.body === 'string' ? init.body : '')],
    });
    const body = answers.shift() ?? {};
    return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json', 'request-id': 'req_fake' } });
  }) as unknown as typeof fetch;
  return { requests, httpClient: Stripe.createFetchHttpClient(fetchFn) };
}

const SECRETS = {
  secret_key: 'sk_test_unit_0123456789',
  webhook_secret: 'whsec_unit',
  prices: { team: 'price_team_1', business: 'price_business_1' },
};
const TENANT = '0190c6a0-0000-7000-8000-000000000001';

const subscription = (price: string, status = 'active', plan?: string) => ({
  id: 'sub_1',
  object: 'subscription',
  customer: 'cus_1',
  status,
  metadata: plan ? { plan } : {},
  items: { object: 'list', data: [{ id: 'si_1', object: 'subscription_item', price: { id: price, object: 'price' } }] },
});

describe('Stripe adapter (lib/billing/stripe.ts)', () => {
  it('checkout: POST /v1/checkout/sessions with the plan’s price, the account as reference and metadata, Idempotency-Key and Stripe-Version', async () => {
    const r = recorder([{ id: 'cs_test_1', object: 'checkout.session', url: 'https://checkout.stripe.com/c/pay/cs_test_1' }]);
    const session = await stripeProvider(SECRETS, { httpClient: r.httpClient }).createCheckout({
      tenantId: TENANT,
      plan: 'team',
      successUrl: 'https://app.example.test/ok',
      cancelUrl: 'https://app.example.test/back',
      idempotencyKey: 'checkout-req-1',
    });
    expect(session).toEqual({ id: 'cs_test_1', url: 'https://checkout.stripe.com/c/pay/cs_test_1' });
    expect(r.requests).toHaveLength(1);
    const [req] = r.requests;
    expect([req!.method, req!.url]).toEqual(['POST', 'https://api.stripe.com/v1/checkout/sessions']);
    expect(req!.headers.get('authorization')).toBe(`Bearer ${SECRETS.secret_key}`);
    expect(req!.headers.get('idempotency-key')).toBe('checkout-req-1');
    expect(req!.headers.get('stripe-version')).toBe(STRIPE_API_VERSION);
    expect(req!.headers.get('content-type')).toBe('application/x-www-form-urlencoded');
    expect(req!.form).toEqual([
      ['mode', 'subscription'],
      ['line_items[0][price]', 'price_team_1'],
      ['line_items[0][quantity]', '1'],
      ['client_reference_id', TENANT],
      ['metadata[tenant_id]', TENANT],
      ['metadata[plan]', 'team'],
      ['subscription_data[metadata][tenant_id]', TENANT],
      ['subscription_data[metadata][plan]', 'team'],
      ['success_url', 'https://app.example.test/ok'],
      ['cancel_url', 'https://app.example.test/back'],
    ]);
  });

  it('without a test HTTP client: the SDK default one (no request made here)', () => {
    expect(stripeProvider(SECRETS).name).toBe('stripe');
  });

  it('checkout for a known customer names it; a session without URL or a plan without price is an error', async () => {
    const r = recorder([
      { id: 'cs_2', object: 'checkout.session', url: 'https://checkout.stripe.com/x' },
      { id: 'cs_3', object: 'checkout.session', url: null },
    ]);
    const p = stripeProvider(SECRETS, { httpClient: r.httpClient });
    const input = {
      tenantId: TENANT,
      plan: 'business' as const,
      customerId: 'cus_9',
      successUrl: 'https://a.test/s',
      cancelUrl: 'https://a.test/c',
      idempotencyKey: 'k2',
    };
    await p.createCheckout(input);
    expect(r.requests[0]!.form).toContainEqual(['customer', 'cus_9']);
    expect(r.requests[0]!.form).toContainEqual(['line_items[0][price]', 'price_business_1']);
    await expect(p.createCheckout({ ...input, idempotencyKey: 'k3' })).rejects.toThrow(/without a URL/);
    await expect(stripeProvider({ ...SECRETS, prices: {} }, { httpClient: r.httpClient }).createCheckout(input)).rejects.toThrow(
      /no price for plan "business"/,
    );
    expect(r.requests).toHaveLength(2);
  });

  it('update: GET the subscription, then POST its item with the new price (Idempotency-Key on the mutation only)', async () => {
    const r = recorder([subscription('price_team_1'), subscription('price_business_1', 'active', 'business')]);
    const next = await stripeProvider(SECRETS, { httpClient: r.httpClient }).updateSubscription(
      { id: 'sub_1', customer: 'cus_1', status: 'active', plan: 'team' },
      'business',
      'update-req-2',
    );
    expect(next).toEqual({ id: 'sub_1', customer: 'cus_1', status: 'active', plan: 'business' });
    expect(r.requests.map((q) => [q.method, q.url])).toEqual([
      ['GET', 'https://api.stripe.com/v1/subscriptions/sub_1'],
      ['POST', 'https://api.stripe.com/v1/subscriptions/sub_1'],
    ]);
    expect(r.requests[0]!.headers.get('idempotency-key')).toBeNull();
    expect(r.requests[1]!.headers.get('idempotency-key')).toBe('update-req-2');
    expect(r.requests.every((q) => q.headers.get('stripe-version') === STRIPE_API_VERSION)).toBe(true);
    expect(r.requests[1]!.form).toEqual([
      ['items[0][id]', 'si_1'],
      ['items[0][price]', 'price_business_1'],
      ['metadata[plan]', 'business'],
      ['proration_behavior', 'create_prorations'],
    ]);
  });

  it('update refuses a subscription without items; cancel: DELETE /v1/subscriptions/{id}, the plan read from the price', async () => {
    const r = recorder([
      { ...subscription('x'), items: { object: 'list', data: [] } },
      { ...subscription('price_team_1', 'canceled'), customer: { id: 'cus_1', object: 'customer' } },
    ]);
    const p = stripeProvider(SECRETS, { httpClient: r.httpClient });
    await expect(p.updateSubscription({ id: 'sub_1', customer: 'cus_1', status: 'active', plan: 'team' }, 'business', 'u')).rejects.toThrow(
      /no item/,
    );
    const ended = await p.cancelSubscription({ id: 'sub_1', customer: 'cus_1', status: 'active', plan: 'team' }, 'cancel-req-3');
    expect(ended).toEqual({ id: 'sub_1', customer: 'cus_1', status: 'canceled', plan: 'team' });
    expect([r.requests[1]!.method, r.requests[1]!.url, r.requests[1]!.headers.get('idempotency-key')]).toEqual([
      'DELETE',
      'https://api.stripe.com/v1/subscriptions/sub_1',
      'cancel-req-3',
    ]);
  });
});

describe('the local provider and webhook verification', () => {
  it('simulates sessions and subscriptions; its events verify with the SDK and the port; tampering and staleness do not', async () => {
    const p = localProvider();
    const s = await p.createCheckout({ tenantId: TENANT, plan: 'team', successUrl: 'x', cancelUrl: 'y', idempotencyKey: 'k' });
    expect(s.id).toMatch(/^cs_local_[0-9a-f]{24}$/);
    const current = { id: 'sub_1', customer: 'cus_1', status: 'past_due', plan: 'team' as const };
    expect(await p.updateSubscription(current, 'business', 'k')).toEqual({ ...current, status: 'active', plan: 'business' });
    expect(await p.cancelSubscription(current, 'k')).toEqual({ ...current, status: 'canceled' });
    const d = signEvent(providerEvent('ping', { id: 'x' }), SECRETS);
    expect(Stripe.webhooks.constructEvent(d.body, d.signature, SECRETS.webhook_secret).id).toBe(d.event.id);
    expect(verifyEvent(d.body, d.signature, SECRETS)?.id).toBe(d.event.id);
    expect(verifyEvent(d.body.replace('ping', 'pong'), d.signature, SECRETS)).toBeNull();
    const old = signEvent(d.event, SECRETS, Math.floor(Date.now() / 1000) - 301);
    expect(verifyEvent(old.body, old.signature, SECRETS)).toBeNull();
    expect(() => verifyEvent('{', Stripe.webhooks.generateTestHeaderString({ payload: '{', secret: SECRETS.webhook_secret }), SECRETS)).toThrow(
      SyntaxError,
    );
  });
});

describe('the payment secret (lib/billing/secrets.ts)', () => {
  it('reads Secrets Manager by id (string or binary), and refuses a document that is not the expected JSON without echoing it', async () => {
    const sm = mockClient(SecretsManagerClient);
    sm.on(GetSecretValueCommand, { SecretId: 'arn:one' }).resolves({ SecretString: JSON.stringify(SECRETS) });
    sm.on(GetSecretValueCommand, { SecretId: 'arn:two' }).resolves({ SecretBinary: Buffer.from(JSON.stringify({ ...SECRETS, prices: undefined })) });
    sm.on(GetSecretValueCommand, { SecretId: 'arn:bad' }).resolves({ SecretString: '{"secret_key":"sk_CANARY-shown"}' });
    sm.on(GetSecretValueCommand, { SecretId: 'arn:text' }).resolves({ SecretString: 'sk_plain' });
    sm.on(GetSecretValueCommand, { SecretId: 'arn:empty' }).resolves({});
    const client = new SecretsManagerClient({ region: 'eu-west-1' });
    const cfg = (id: string) => ({ PAYMENT_SECRET_ID: id, PAYMENT_SECRET_FILE: undefined, AWS_REGION: 'eu-west-1' });
    expect(await paymentSecrets(cfg('arn:one'), client)).toEqual(SECRETS);
    // cached: the second read makes no call
    expect(await paymentSecrets(cfg('arn:one'), client)).toEqual(SECRETS);
    expect(sm.commandCalls(GetSecretValueCommand, { SecretId: 'arn:one' })).toHaveLength(1);
    expect(await paymentSecrets(cfg('arn:two'), client)).toEqual({ ...SECRETS, prices: {} });
    const bad = await paymentSecrets(cfg('arn:bad'), client).catch((e: Error) => e.message);
    expect(bad).toBe('the payment secret (Secrets Manager) must be {"secret_key", "webhook_secret", "prices"?}: webhook_secret');
    await expect(paymentSecrets(cfg('arn:text'), client)).rejects.toThrow('the payment secret (Secrets Manager) is not JSON');
    await expect(paymentSecrets(cfg('arn:empty'), client)).rejects.toThrow(/not JSON/);
    await expect(paymentSecrets({ PAYMENT_SECRET_ID: undefined, PAYMENT_SECRET_FILE: undefined, AWS_REGION: 'x' })).rejects.toThrow(/neither/);
    sm.restore();
  });

  it('the local provider’s file: created once with a fresh signing secret, then read as is', async () => {
    const dir = testDirectory('payment-');
    const file = join(dir, 'sub', 'local.json');
    const cfg = { PAYMENT_SECRET_ID: undefined, PAYMENT_SECRET_FILE: file, AWS_REGION: 'x' };
    const first = await paymentSecrets(cfg);
    expect(first.webhook_secret).toMatch(/^whsec_/);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(first);
    const other = join(dir, 'given.json');
    writeFileSync(other, JSON.stringify(SECRETS));
    expect(await paymentSecrets({ ...cfg, PAYMENT_SECRET_FILE: other })).toEqual(SECRETS);
  });
});

describe('diagnostics configuration', () => {
  it('redacts every secret-bearing name and credentials inside URLs', () => {
    expect(
      redactedConfiguration({
        PKCS11_PIN: 'user:pw',
        PAYMENT_SECRET_ID: 'arn',
        KMS_KEY_ID: 'arn:key',
        TABLE_NAME: 't',
        WEBHOOK_QUEUE_URL: 'https://user:pw@sqs.example.test/q',
        PUBLIC_BASE_URL: 'https://api.example.test',
        UNSET: undefined,
        MAX: 16,
      }),
    ).toEqual({
      KMS_KEY_ID: '[redacted]',
      MAX: 16,
      PAYMENT_SECRET_ID: '[redacted]',
      PKCS11_PIN: '[redacted]',
      PUBLIC_BASE_URL: 'https://api.example.test',
      TABLE_NAME: 't',
      WEBHOOK_QUEUE_URL: 'https://[redacted]@sqs.example.test/q',
    });
  });
});

describe('the integrator helpers where the deployment has not turned them on', () => {
  let key: string;
  beforeAll(async () => {
    const t = await table();
    const tenantId = await t.account();
    key = generateApiKey().key;
    await t.put({
      pk: `KEY#${hashApiKey(key)}`,
      sk: 'KEY',
      tenant_id: tenantId,
      key_id: randomUUID(),
      scopes: ['admin:*'],
      created_by: 'mock@unit.example',
      expires_at: null,
    });
  });

  it.each([
    ['GET', '/api/v1/mock/templates/{type}', 'templates', { type: 'secret' }, null],
    ['POST', '/api/v1/mock/configure', 'configure', null, '{}'],
  ] as const)('%s %s answers 404 route_not_found', async (method, resource, name, pathParameters, body) => {
    const mock = await import('../../functions/diagnostics/mock.js');
    const event = {
      httpMethod: method,
      resource,
      path: resource,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      multiValueHeaders: {},
      pathParameters,
      queryStringParameters: null,
      multiValueQueryStringParameters: null,
      stageVariables: null,
      body,
      isBase64Encoded: false,
      requestContext: { requestId: `req-${randomUUID()}`, identity: { sourceIp: '192.0.2.10', userAgent: 'unit' } },
    } as unknown as APIGatewayProxyEvent;
    const res = await mock[name](event, { awsRequestId: 'a', getRemainingTimeInMillis: () => 28_000 } as never);
    expect([res.statusCode, JSON.parse(res.body).code]).toEqual([404, 'route_not_found']);
  });
});

describe('billing and diagnostics in a process without a payment provider', () => {
  let tenantId: string;
  const ctxOf = (scopes: string[]) => ({
    principal: { kind: 'api_key' as const, tenantId, tenant: { id: tenantId } as never, id: 'k1', user: 'u@unit.example', scopes, operator: false },
    requestId: `req-${randomUUID()}`,
    sourceIp: null,
    userAgent: null,
  });
  beforeAll(async () => {
    tenantId = await (await table()).account();
  });

  it('checkout, update and cancel answer 503; the inbound webhook 404', async () => {
    const { startCheckout, updateSubscription, cancelSubscription } = await import('../../lib/billing/subscriptions.js');
    const { receiveEvent } = await import('../../lib/billing/webhook.js');
    for (const call of [
      () => startCheckout(ctxOf(['admin:*']), { plan: 'team' }),
      () => updateSubscription(ctxOf(['admin:*']), 'team'),
      () => cancelSubscription(ctxOf(['admin:*'])),
    ]) {
      await expect(call()).rejects.toMatchObject({ status: 503, code: 'service_unavailable' });
    }
    await expect(receiveEvent('stripe', '{}', 't=1,v1=0')).rejects.toMatchObject({ status: 404 });
  });

  it('diagnostics: what is not configured says so; a caller without admin:* sees its own scopes', async () => {
    const { diagnostics } = await import('../../lib/diagnostics/health.js');
    const d = await diagnostics(ctxOf(['secrets:read', 'audit:read']));
    const byName = Object.fromEntries(d.dependencies.map((x) => [x.name, x]));
    expect(byName.payment_provider).toEqual({ name: 'payment_provider', status: 'not_configured' });
    expect(byName.s3).toEqual({ name: 's3', status: 'not_configured' });
    expect(byName.table).toMatchObject({ status: 'ok' });
    expect(d.caller.effective_scopes).toEqual(['audit:read', 'secrets:read']);
    expect(d.status).toBe(d.dependencies.some((x) => x.status === 'error') ? 'degraded' : 'ok');
  });
});

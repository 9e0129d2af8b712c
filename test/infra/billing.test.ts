import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../lib/routes.js';
import { actionsOf, expectedActions, functionsByRoute, roleStatements, synthesize } from './synth.js';

/**
 * The billing and integrator-helper settings of a deployment (infra/settings.ts): the payment
 * provider's secret (context paymentSecretArn) reaches only the functions whose routes
 * declare the `payment` grant, as Stripe's configuration and one GetSecretValue on that
 * secret; the mock routes answer only where context mockRoutes turns them on.
 */
const ROUTES_HERE = ROUTES.filter((r) => r.family === 'billing' || r.family === 'diagnostics');
const SECRET = 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:stripe-AbCdEf';
const env = (fn: { resource: { Properties?: Record<string, any> } }) =>
  (fn.resource.Properties!.Environment?.Variables ?? {}) as Record<string, unknown>;

describe('billing and mock settings', () => {
  it('by default: no provider, no secret access, the mock routes off', () => {
    const s = synthesize({ routes: ROUTES_HERE });
    const fns = functionsByRoute(s);
    for (const route of ROUTES_HERE) {
      const fn = fns.get(route.key)!;
      expect(env(fn), route.key).not.toHaveProperty('PAYMENT_PROVIDER');
      expect(env(fn), route.key).not.toHaveProperty('MOCK_ROUTES_ENABLED');
      expect(actionsOf(s, fn), route.key).toEqual(expectedActions(route.grants, false, false, false, route));
    }
    expect(roleStatements(s).some(({ statement }) => [statement.Action].flat().includes('secretsmanager:GetSecretValue'))).toBe(false);
  });

  it('with paymentSecretArn and mockRoutes: Stripe and GetSecretValue on that secret for the payment routes only; the mock routes on', () => {
    const s = synthesize({ routes: ROUTES_HERE, context: { paymentSecretArn: SECRET, mockRoutes: 'true' } });
    const fns = functionsByRoute(s);
    const payment = ROUTES_HERE.filter((r) => r.grants.includes('payment')).map((r) => r.key);
    expect(payment.sort()).toEqual([
      'POST /api/v1/billing/checkout',
      'POST /api/v1/billing/subscription/cancel',
      'POST /api/v1/billing/subscription/update',
      'POST /webhooks/{payment_provider}',
    ]);
    for (const route of ROUTES_HERE) {
      const fn = fns.get(route.key)!;
      const pays = payment.includes(route.key);
      if (pays) expect(env(fn), route.key).toMatchObject({ PAYMENT_PROVIDER: 'stripe', PAYMENT_SECRET_ID: SECRET });
      else expect(env(fn), route.key).not.toHaveProperty('PAYMENT_SECRET_ID');
      expect(env(fn).MOCK_ROUTES_ENABLED, route.key).toBe(route.path.startsWith('/api/v1/mock/') ? '1' : undefined);
      expect(actionsOf(s, fn), route.key).toEqual(expectedActions(route.grants, false, false, true, route));
    }
    const statements = roleStatements(s).filter(({ statement }) => [statement.Action].flat().includes('secretsmanager:GetSecretValue'));
    expect(statements.length).toBeGreaterThan(0);
    for (const { statement } of statements) expect(statement.Resource).toBe(SECRET);
  });
});

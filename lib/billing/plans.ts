import type { Quota } from '../store/tenants.js';

/**
 * The plans, as data: what each costs and the quota it sets (max secrets, API keys,
 * webhooks, devices, requests per minute). GET /api/v1/billing/pricing publishes this table;
 * a plan change writes the plan's quota through lib/operator/tenants.ts setTenantQuota, the
 * same path as PUT /api/v1/admin/tenants/{id}/quota. `free` is where a cancelled
 * subscription lands; the paid plans are bought through the payment provider.
 */
interface Plan {
  readonly id: string;
  readonly name: string;
  /** Price per interval in the currency's minor unit (cents). */
  readonly price: { readonly amount: number; readonly currency: 'usd'; readonly interval: 'month' };
  readonly quota: Required<Pick<Quota, 'max_secrets' | 'max_api_keys' | 'max_webhooks' | 'max_devices' | 'requests_per_minute'>>;
}

export const PLANS = [
  {
    id: 'free',
    name: 'Free',
    price: { amount: 0, currency: 'usd', interval: 'month' },
    quota: { max_secrets: 100, max_api_keys: 5, max_webhooks: 2, max_devices: 10, requests_per_minute: 600 },
  },
  {
    id: 'team',
    name: 'Team',
    price: { amount: 4_900, currency: 'usd', interval: 'month' },
    quota: { max_secrets: 10_000, max_api_keys: 100, max_webhooks: 25, max_devices: 1_000, requests_per_minute: 6_000 },
  },
  {
    id: 'business',
    name: 'Business',
    price: { amount: 19_900, currency: 'usd', interval: 'month' },
    quota: { max_secrets: 100_000, max_api_keys: 500, max_webhooks: 100, max_devices: 10_000, requests_per_minute: 30_000 },
  },
] as const satisfies readonly Plan[];

export type PlanId = (typeof PLANS)[number]['id'];
/** Plans bought through the provider (checkout, subscription update). */
export const PAID_PLAN_IDS = ['team', 'business'] as const satisfies readonly PlanId[];
export const FREE_PLAN: Plan = PLANS[0];

export const planById = (id: string): Plan | undefined => PLANS.find((p) => p.id === id);

import { defineHandler, ok } from '../../lib/http/index.js';
import { getCounters, requestsByDay } from '../../lib/store/usage.js';
import { DEFAULT_REQUESTS_PER_MINUTE } from '../../lib/ratelimit/gate.js';
import { config } from '../../lib/config.js';
import { QuotasSchema, UsageSchema } from '../../lib/account/schemas.js';

/**
 * Quotas and usage of the caller's own account. Any valid credential of the account may
 * read them (the spec checks in the handler; counts and limits reveal no secret).
 */
export const quotas = defineHandler({
  summary: 'Get the account’s quotas and rate limits',
  responses: { 200: QuotasSchema },
  async handler({ ctx }) {
    const quota = ctx.principal.tenant.quota;
    const rpm = quota.requests_per_minute ?? DEFAULT_REQUESTS_PER_MINUTE;
    return ok({
      tenant_id: ctx.principal.tenantId,
      quota,
      // token buckets (lib/ratelimit): capacity = the per-minute limit, refilled at limit/60 per second
      rate_limits: {
        account: { requests_per_minute: rpm, burst: rpm },
        credential:
          quota.requests_per_minute_per_credential !== undefined
            ? { requests_per_minute: quota.requests_per_minute_per_credential, burst: quota.requests_per_minute_per_credential }
            : null,
        unauthenticated_per_ip: { requests_per_minute: config().RATE_LIMIT_IP_PER_MINUTE, burst: config().RATE_LIMIT_IP_PER_MINUTE },
      },
      over_quota: { status: 403, code: 'quota_exceeded' },
      over_rate: { status: 429, code: 'rate_limited' },
    });
  },
});

export const usage = defineHandler({
  summary: 'Get the account’s usage',
  description: 'Counts against each quota, and requests today, over the last 30 days and by day.',
  responses: { 200: UsageSchema },
  async handler({ ctx }) {
    const tid = ctx.principal.tenantId;
    const [counters, days] = await Promise.all([getCounters(tid), requestsByDay(tid, 30)]);
    const quota = ctx.principal.tenant.quota;
    return ok({
      tenant_id: tid,
      secrets: { used: counters.secrets, limit: quota.max_secrets ?? null },
      api_keys: { used: counters.api_keys, limit: quota.max_api_keys ?? null },
      webhooks: { used: counters.webhooks, limit: quota.max_webhooks ?? null },
      devices: { used: counters.devices, limit: quota.max_devices ?? null },
      requests: {
        today: days.find((d) => d.day === new Date().toISOString().slice(0, 10))?.requests ?? 0,
        last_30_days: days.reduce((sum, d) => sum + d.requests, 0),
        by_day: days,
      },
    });
  },
});

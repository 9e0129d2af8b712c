import { defineHandler, ok } from '../../lib/http/index.js';
import { getCounters, requestsByDay } from '../../lib/store/usage.js';

/**
 * Quotas and usage of the caller's own account. Any valid credential of the account may
 * read them (the spec checks in the handler; counts and limits reveal no secret).
 */
export const quotas = defineHandler({
  async handler({ ctx }) {
    return ok({ tenant_id: ctx.principal.tenantId, quota: ctx.principal.tenant.quota });
  },
});

export const usage = defineHandler({
  async handler({ ctx }) {
    const tid = ctx.principal.tenantId;
    const [counters, days] = await Promise.all([getCounters(tid), requestsByDay(tid, 30)]);
    const quota = ctx.principal.tenant.quota;
    return ok({
      tenant_id: tid,
      secrets: { used: counters.secrets, limit: quota.max_secrets ?? null },
      api_keys: { used: counters.api_keys, limit: quota.max_api_keys ?? null },
      requests: {
        today: days.find((d) => d.day === new Date().toISOString().slice(0, 10))?.requests ?? 0,
        last_30_days: days.reduce((sum, d) => sum + d.requests, 0),
        by_day: days,
      },
    });
  },
});

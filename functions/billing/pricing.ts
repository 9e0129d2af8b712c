import { defineHandler, ok } from '../../lib/http/index.js';
import { PLANS } from '../../lib/billing/plans.js';

/** GET /api/v1/billing/pricing: the plans, their prices and quotas (public). */
export const pricing = defineHandler({
  async handler() {
    return ok({ plans: PLANS, total: PLANS.length });
  },
});

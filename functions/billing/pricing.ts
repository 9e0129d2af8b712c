import { defineHandler, ok } from '../../lib/http/index.js';
import { PLANS } from '../../lib/billing/plans.js';
import { Pricing } from '../../lib/billing/schemas.js';

/** GET /api/v1/billing/pricing: the plans, their prices and quotas (public). */
export const pricing = defineHandler({
  summary: 'List plans and prices',
  description: 'The plans, their monthly prices and the quota each sets. Public.',
  responses: { 200: Pricing },
  async handler() {
    return ok({ plans: PLANS, total: PLANS.length });
  },
});

import { defineHandler, ok } from '../../lib/http/index.js';
import { checkBreach, CheckBreachBody } from '../../lib/tools/breach.js';

/** POST /api/v1/intelligence/check-breach (lib/tools/breach.ts): only a 5-character SHA-1 prefix leaves the service. */
export const check = defineHandler({
  body: CheckBreachBody,
  async handler({ ctx, body }) {
    return ok(await checkBreach(ctx, body));
  },
});

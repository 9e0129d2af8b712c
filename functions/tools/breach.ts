import { defineHandler, ok } from '../../lib/http/index.js';
import { checkBreach, CheckBreachBody } from '../../lib/tools/breach.js';
import { BreachCheck } from '../../lib/tools/schemas.js';

/** POST /api/v1/intelligence/check-breach (lib/tools/breach.ts): only a 5-character SHA-1 prefix leaves the service. */
export const check = defineHandler({
  summary: 'Check a password against known breaches',
  description: 'A password, or a stored credential’s, checked with k-anonymity: only the first 5 hex characters of its SHA-1 leave the service.',
  responses: { 200: BreachCheck },
  errors: ['not_found', 'bad_request', 'service_unavailable'],
  body: CheckBreachBody,
  async handler({ ctx, body }) {
    return ok(await checkBreach(ctx, body));
  },
});

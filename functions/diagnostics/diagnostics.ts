import { diagnostics } from '../../lib/diagnostics/health.js';
import { defineHandler, ok } from '../../lib/http/index.js';

/**
 * GET /api/v1/diagnostics: dependency health, versions, redacted configuration, the caller's
 * scopes. Its own module: the signing device's status brings the PKCS#11 and KMS code
 * (the trace, functions/diagnostics/trace.ts, stays small).
 */
export const get = defineHandler({
  async handler({ ctx }) {
    return ok({ diagnostics: await diagnostics(ctx) });
  },
});

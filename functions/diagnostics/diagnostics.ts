import { diagnostics } from '../../lib/diagnostics/health.js';
import { Diagnostics } from '../../lib/diagnostics/schemas.js';
import { defineHandler, ok } from '../../lib/http/index.js';

/**
 * GET /api/v1/diagnostics: dependency health, versions, redacted configuration, the caller's
 * scopes. Its own module: the signing device's status brings the PKCS#11 and KMS code
 * (the trace, functions/diagnostics/trace.ts, stays small).
 */
export const get = defineHandler({
  summary: 'Report service health and the caller’s credential',
  description:
    'Dependency probes (table, key provider, signing device, queue, storage, payment provider), versions, the redacted configuration and the caller’s scopes.',
  responses: { 200: Diagnostics },
  async handler({ ctx }) {
    return ok({ diagnostics: await diagnostics(ctx) });
  },
});

import { readIdentity } from '../../lib/agents/access.js';
import { defineHandler, ok } from '../../lib/http/index.js';
import { Identity } from '../../lib/agents/schemas.js';

/** GET /api/v1/agent/identity (a signed device request: lib/agents/device-signature.ts). */
export const identity = defineHandler({
  summary: 'Read the calling device’s identity (device)',
  description: 'A signed device request: the device, its profile and the aliases it may use (audited).',
  responses: { 200: Identity },
  errors: ['profile_disabled'],
  async handler({ ctx }) {
    return ok({ identity: await readIdentity(ctx) });
  },
});

import { readIdentity } from '../../lib/agents/access.js';
import { defineHandler, ok } from '../../lib/http/index.js';

/** GET /api/v1/agent/identity (a signed device request: lib/auth/device-signature.ts). */
export const identity = defineHandler({
  async handler({ ctx }) {
    return ok({ identity: await readIdentity(ctx) });
  },
});

import { resolveGrantedVariables, VariablesBody } from '../../lib/agents/variables.js';
import { defineHandler, ok } from '../../lib/http/index.js';

/** POST /api/v1/agent/variables/resolve (a signed device request): only variables over granted credentials. */
export const resolveVariables = defineHandler({
  body: VariablesBody,
  async handler({ ctx, body }) {
    return ok(await resolveGrantedVariables(ctx, body));
  },
});

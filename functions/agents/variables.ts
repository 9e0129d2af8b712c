import { resolveGrantedVariables, VariablesBody } from '../../lib/agents/variables.js';
import { defineHandler, ok } from '../../lib/http/index.js';
import { ResolvedVariables } from '../../lib/agents/schemas.js';

/** POST /api/v1/agent/variables/resolve (a signed device request): only variables over granted credentials. */
export const resolveVariables = defineHandler({
  summary: 'Resolve variables over granted credentials (device)',
  description: 'A signed device request, as POST /api/v1/variables/resolve, limited to variables bound to credentials the device’s profile grants.',
  responses: { 200: ResolvedVariables },
  errors: ['profile_disabled', 'not_found', 'bad_request'],
  body: VariablesBody,
  async handler({ ctx, body }) {
    return ok(await resolveGrantedVariables(ctx, body));
  },
});

import { TraceBody } from '../../lib/diagnostics/schemas.js';
import { traceRead } from '../../lib/diagnostics/trace.js';
import { defineHandler, ok } from '../../lib/http/index.js';

/** POST /api/v1/diagnostics/trace: a described read of the caller's own resource, timed phase by phase. */
export const trace = defineHandler({
  body: TraceBody,
  async handler({ ctx, body }) {
    return ok({ trace: await traceRead(ctx, body) });
  },
});

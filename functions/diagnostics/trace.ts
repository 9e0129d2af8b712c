import { Trace, TraceBody } from '../../lib/diagnostics/schemas.js';
import { traceRead } from '../../lib/diagnostics/trace.js';
import { defineHandler, ok } from '../../lib/http/index.js';

/** POST /api/v1/diagnostics/trace: a described read of the caller's own resource, timed phase by phase. */
export const trace = defineHandler({
  summary: 'Trace a read of one of your resources',
  description:
    'Reads the resource (and opens its sealed part unless `open` is false) and times each phase with its DynamoDB and key-provider calls. The value is never returned.',
  responses: { 200: Trace },
  errors: ['not_found'],
  body: TraceBody,
  async handler({ ctx, body }) {
    return ok({ trace: await traceRead(ctx, body) });
  },
});

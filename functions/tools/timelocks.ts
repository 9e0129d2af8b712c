import { defineHandler, ok } from '../../lib/http/index.js';
import { IdParams } from '../../lib/schemas.js';
import { TimelockBody } from '../../lib/tools/timelock/schemas.js';
import { readTimelock, timelockAction } from '../../lib/tools/timelock/service.js';

/** Time-locks with break-glass (lib/tools/timelock): POST seals, requests an early release or vetoes one; GET reads. */
export const action = defineHandler({
  body: TimelockBody,
  async handler({ ctx, body }) {
    const out = await timelockAction(ctx, body);
    return { status: out.status, data: out.data };
  },
});

export const get = defineHandler({
  params: IdParams,
  async handler({ ctx, params }) {
    return ok(await readTimelock(ctx, params.id));
  },
});

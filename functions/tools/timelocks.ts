import { defineHandler, ok } from '../../lib/http/index.js';
import { IdParams } from '../../lib/schemas.js';
import { TimelockAnswer, TimelockBody, TimelockRead } from '../../lib/tools/timelock/schemas.js';
import { readTimelock, timelockAction } from '../../lib/tools/timelock/service.js';

/** Time-locks with break-glass (lib/tools/timelock): POST seals, requests an early release or vetoes one; GET reads. */
export const action = defineHandler({
  summary: 'Seal a time-lock, or request or veto its early release',
  description:
    '`seal` (201) seals a value until `release_at`, optionally with break-glass (an early release after a delay, vetoable; veto shares returned once). `request_release` starts the break-glass delay; `veto` stops it (an admin, or enough veto shares).',
  responses: { 200: TimelockAnswer, 201: TimelockAnswer },
  errors: ['not_found', 'bad_request', 'shares_invalid', 'conflict', 'forbidden'],
  body: TimelockBody,
  async handler({ ctx, body }) {
    const out = await timelockAction(ctx, body);
    return { status: out.status, data: out.data };
  },
});

export const get = defineHandler({
  summary: 'Read a time-lock',
  description: 'Its state, and its value once released (audited).',
  responses: { 200: TimelockRead },
  errors: ['not_found'],
  params: IdParams,
  async handler({ ctx, params }) {
    return ok(await readTimelock(ctx, params.id));
  },
});

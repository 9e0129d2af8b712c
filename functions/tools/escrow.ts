import { defineHandler, ok } from '../../lib/http/index.js';
import { CombineBody, combine as combineShares, SplitBody, split as splitSecret } from '../../lib/tools/escrow/service.js';

/** Shamir escrow (lib/tools/escrow): split a secret m-of-n, combine shares back. */
export const split = defineHandler({
  body: SplitBody,
  async handler({ ctx, body }) {
    return ok(await splitSecret(ctx, body));
  },
});

export const combine = defineHandler({
  body: CombineBody,
  async handler({ ctx, body }) {
    return ok(await combineShares(ctx, body.shares));
  },
});

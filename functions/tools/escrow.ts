import { defineHandler, ok } from '../../lib/http/index.js';
import { CombineBody, combine as combineShares, SplitBody, split as splitSecret } from '../../lib/tools/escrow/service.js';
import { EscrowCombined, EscrowSplit } from '../../lib/tools/schemas.js';

/** Shamir escrow (lib/tools/escrow): split a secret m-of-n, combine shares back. */
export const split = defineHandler({
  summary: 'Split a secret into escrow shares',
  description:
    'Shamir m-of-n: any `threshold` of the `shares` recover the secret. The shares are returned once and never stored; audited (counts only).',
  responses: { 200: EscrowSplit },
  errors: ['bad_request'],
  body: SplitBody,
  async handler({ ctx, body }) {
    return ok(await splitSecret(ctx, body));
  },
});

export const combine = defineHandler({
  summary: 'Combine escrow shares',
  description: 'Recovers the secret from at least `threshold` shares of one split.',
  responses: { 200: EscrowCombined },
  errors: ['shares_invalid'],
  body: CombineBody,
  async handler({ ctx, body }) {
    return ok(await combineShares(ctx, body.shares));
  },
});

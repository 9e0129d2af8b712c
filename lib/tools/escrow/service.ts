import { randomBytes } from 'node:crypto';
import * as z from 'zod/v4';
import { exactlyOneOf } from '../../schemas.js';
import type { CallContext } from '../../auth/principal.js';
import { recordAudit } from '../../audit/audit.js';
import { badRequest } from '../../core/errors.js';
import { combineShares, splitSecret } from './shamir.js';

/** POST /api/v1/escrow/split and /combine: shares are returned once and never stored; both are audited (ids and counts only). */
const SplitBodyFields = z
  .strictObject({
    /** The secret as text (UTF-8), or `secret_base64` for bytes; at most 64 KiB. */
    secret: z
      .string()
      .min(1)
      .max(64 * 1024)
      .optional(),
    secret_base64: z
      .base64()
      .min(1)
      .max(88 * 1024)
      .optional(),
    shares: z.number().int().min(2).max(255),
    threshold: z.number().int().min(2).max(255),
  })
  .refine((b) => b.threshold <= b.shares, { message: 'threshold must not exceed shares', path: ['threshold'] });
export const SplitBody = exactlyOneOf(SplitBodyFields, ['secret', 'secret_base64'], 'send exactly one of secret or secret_base64', 'secret');
export type SplitBody = z.infer<typeof SplitBody>;

export const CombineBody = z.strictObject({ shares: z.array(z.string().min(1).max(200_000)).min(1).max(255) });

const resource = (splitId: string) => ({ type: 'escrow_split', id: splitId });

export async function split(ctx: CallContext, body: SplitBody) {
  const secret = body.secret !== undefined ? Buffer.from(body.secret, 'utf8') : Buffer.from(body.secret_base64!, 'base64');
  if (secret.length > 64 * 1024) throw badRequest('the secret is over 64 KiB', [{ path: 'body.secret_base64', message: 'at most 65536 bytes' }]);
  const out = await splitSecret(secret, body.shares, body.threshold, randomBytes(8).toString('hex'));
  await recordAudit(ctx, ctx.principal.tenantId, {
    action: 'escrow.split',
    resource: resource(out.split_id),
    detail: { shares: body.shares, threshold: body.threshold, bytes: secret.length },
  });
  return out;
}

export async function combine(ctx: CallContext, shares: readonly string[]) {
  const out = await combineShares(shares);
  await recordAudit(ctx, ctx.principal.tenantId, {
    action: 'escrow.combine',
    resource: resource(out.split_id),
    detail: { shares: shares.length, threshold: out.threshold },
  });
  const text = out.secret.toString('utf8');
  const isText = Buffer.from(text, 'utf8').equals(out.secret);
  return { split_id: out.split_id, secret: isText ? text : null, secret_base64: out.secret.toString('base64') };
}

import { createHash } from 'node:crypto';
import * as z from 'zod/v4';
import { exactlyOneOf } from '../schemas.js';
import type { CallContext } from '../auth/principal.js';
import { requireScopes } from '../auth/scopes.js';
import { secretReadScopes } from '../catalog.js';
import { config } from '../config.js';
import { badRequest, notFound, serviceUnavailable } from '../core/errors.js';
import { readHead, typeOrNotFound } from '../sharing/heads.js';
import { openSecret } from '../resources/store.js';
import { type Answer, OutboundFailed } from '../events/outbound.js';
import { outboundTimeoutMs } from '../events/timeouts.js';
import { guardedGet } from './outbound.js';

/**
 * Breach checks by k-anonymity (the Have I Been Pwned range API model): the password's
 * SHA-1 is computed here and only its first 5 hex characters leave the service
 * (`GET <BREACH_RANGE_URL><prefix>` with `Add-Padding: true`); the answer lists
 * `SUFFIX:COUNT` lines of every known hash with that prefix (padding lines count 0), and the
 * match is made here. The password is never stored, logged or echoed.
 */
const CheckBreachBodyFields = z.strictObject({
  password: z.string().min(1).max(1024).optional(),
  credential: z
    .strictObject({
      type: z.string().min(1).max(64),
      id: z.uuid(),
      field: z
        .string()
        .min(1)
        .max(128)
        .regex(/^[A-Za-z0-9_.-]+$/)
        .optional(),
    })
    .optional(),
});
export const CheckBreachBody = exactlyOneOf(
  CheckBreachBodyFields,
  ['password', 'credential'],
  'send either password or credential ({type, id, field?}), not both',
);
type CheckBreachBody = z.infer<typeof CheckBreachBody>;

const RANGE_MAX_BYTES = 2 * 1024 * 1024;

/** The password field of a credential: `field`, else `password`, else `value`. */
async function credentialPassword(ctx: CallContext, ref: NonNullable<CheckBreachBody['credential']>): Promise<string> {
  const entry = typeOrNotFound(ref.type);
  requireScopes(ctx.principal, secretReadScopes(entry));
  const head = await readHead(ctx.principal.tenantId, entry.type, ref.id);
  if (!head) throw notFound(entry.label);
  const secret = (await openSecret<Record<string, unknown>>(ctx.principal.tenantId, head.record, head.sealed)) ?? {};
  const field = ref.field ?? ['password', 'value'].find((f) => typeof secret[f] === 'string');
  const value = field === undefined ? undefined : secret[field];
  if (typeof value !== 'string' || value === '') {
    throw badRequest(`the ${entry.label} has no secret text field ${field ? `"${field}"` : '"password" or "value"'}: name one in credential.field`);
  }
  return value;
}

/** Counts of the range answer: `SUFFIX:COUNT` lines (CRLF or LF); padding entries have count 0. */
function countInRange(body: string, suffix: string): number {
  for (const line of body.split(/\r?\n/)) {
    const [s, c] = line.trim().split(':');
    if (s?.toUpperCase() === suffix) {
      const n = Number(c);
      return Number.isInteger(n) && n > 0 ? n : 0;
    }
  }
  return 0;
}

export async function checkBreach(ctx: CallContext, body: CheckBreachBody) {
  const password = body.password ?? (await credentialPassword(ctx, body.credential!));
  const hash = createHash('sha1').update(password, 'utf8').digest('hex').toUpperCase();
  const prefix = hash.slice(0, 5);
  let answer: Answer;
  try {
    answer = await guardedGet(
      `${config().BREACH_RANGE_URL}${prefix}`,
      { 'add-padding': 'true', 'user-agent': 'secrets-api-breach-check/1' },
      {
        timeoutMs: outboundTimeoutMs('breach-range'),
        maxBytes: RANGE_MAX_BYTES,
      },
    );
  } catch (error) {
    if (error instanceof OutboundFailed) throw serviceUnavailable(`the breach range service is unavailable: ${error.message}`);
    throw error;
  }
  if (answer.status !== 200) throw serviceUnavailable(`the breach range service answered ${answer.status}`);
  const count = countInRange(answer.body.toString('utf8'), hash.slice(5));
  return {
    breached: count > 0,
    count,
    checked: body.credential ? { type: body.credential.type, id: body.credential.id } : 'password',
    method: 'k-anonymity (SHA-1 prefix of 5 hex characters)',
  };
}

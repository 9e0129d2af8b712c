import * as z from 'zod/v4';
import { commit } from '../../lib/audit/audit.js';
import { badRequest, conflict, defineHandler, notFound, ok } from '../../lib/http/index.js';
import { tableName } from '../../lib/store/client.js';
import { keys } from '../../lib/store/keys.js';
import { TxConditionFailed } from '../../lib/store/tx.js';
import { collectionHandlers } from '../../lib/credentials/handlers.js';
import { IdParams } from '../../lib/schemas.js';
import { openTyped } from '../../lib/credentials/service.js';
import { decodeOtp, Otp, YubikeyValidation, yubikey } from '../../lib/credentials/types/yubikey.js';

const crud = collectionHandlers(yubikey);
/** The collection's five CRUD routes. */
export const { list, create, get, update, remove } = crud;
const def = crud.def;

/**
 * POST /api/v1/yubikeys/{id}/validate {"otp": "..."}: 200 with the decoded counters when
 * the OTP is genuine and newer than every OTP accepted before; 400 `otp_invalid` when it is
 * not this key's; 409 `otp_replayed` when its counter is not above the last accepted one.
 * The counter advances in one transaction with the audit entry, conditioned on the stored
 * counter being lower and on the credential still existing: of two concurrent requests
 * with the same OTP exactly one succeeds.
 */
export const validate = defineHandler({
  summary: 'Validate a YubiKey OTP',
  description:
    'Checks a Yubico OTP against the key: 200 with its decoded counters when it is genuine and newer than every OTP accepted before; 400 `otp_invalid` when it is not this key’s; 409 `otp_replayed` when its counter is not above the last accepted one.',
  responses: { 200: YubikeyValidation },
  errors: ['otp_invalid', 'otp_replayed', 'concurrent_validation'],
  params: IdParams,
  body: z.strictObject({ otp: Otp }),
  async handler({ ctx, params, body }) {
    const tid = ctx.principal.tenantId;
    const { record, fields } = await openTyped(tid, def, params.id);
    const check = decodeOtp(body.otp, fields);
    if (!check.ok) throw badRequest(check.reason, [{ path: 'body.otp', message: check.reason }], 'otp_invalid');
    const { otp } = check;
    try {
      await commit(
        ctx,
        tid,
        [
          {
            Update: {
              TableName: tableName(),
              Key: keys.otpCounter(tid, record.id),
              UpdateExpression: 'SET #c = :c, #at = :at',
              ConditionExpression: 'attribute_not_exists(#c) OR #c < :c',
              ExpressionAttributeNames: { '#c': 'counter', '#at': 'updated_at' },
              ExpressionAttributeValues: { ':c': otp.counter, ':at': new Date().toISOString() },
            },
          },
          { ConditionCheck: { TableName: tableName(), Key: keys.resource(tid, def.type, record.id), ConditionExpression: 'attribute_exists(pk)' } },
        ],
        { action: 'yubikey.validate', resource: { type: def.type, id: record.id, name: record.name }, detail: { counter: otp.counter } },
      );
    } catch (error) {
      if (error instanceof TxConditionFailed) {
        if (error.index === 1) throw notFound('yubikey');
        if (error.conflict) throw conflict('another validation of this YubiKey is in progress; retry with a fresh OTP', 'concurrent_validation');
        throw conflict('OTP replayed: its counter is not above the last accepted OTP of this YubiKey', 'otp_replayed');
      }
      throw error;
    }
    return ok({
      valid: true,
      status: 'OK',
      id: record.id,
      public_id: otp.publicId,
      usage_counter: otp.usageCounter,
      session_counter: otp.sessionCounter,
      timestamp: otp.timestamp,
      counter: otp.counter,
    });
  },
});

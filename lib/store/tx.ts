import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { db } from './client.js';
import { admitted } from '../core/admission.js';

export type TxItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** A transaction refused by a condition: `index` is the first item whose condition failed. */
export class TxConditionFailed extends Error {
  constructor(
    readonly index: number,
    readonly conflict: boolean,
  ) {
    super(conflict ? 'transaction conflict' : `condition of item ${index} failed`);
  }
}

/**
 * All-or-nothing write of up to 100 items. A failed condition (or a concurrent
 * transaction on the same item) surfaces as TxConditionFailed, so callers map it to
 * their own 404/409 without inspecting SDK errors.
 */
export async function transact(items: TxItem[], clientRequestToken?: string): Promise<void> {
  // a speculative handler run writes nothing before its request is admitted (lib/core/admission.ts)
  await admitted();
  try {
    await db().send(new TransactWriteCommand({ TransactItems: items, ClientRequestToken: clientRequestToken }));
  } catch (error) {
    if (error instanceof TransactionCanceledException) {
      const reasons = error.CancellationReasons ?? [];
      const failed = reasons.findIndex((r) => r.Code === 'ConditionalCheckFailed');
      if (failed >= 0) throw new TxConditionFailed(failed, false);
      if (reasons.some((r) => r.Code === 'TransactionConflict')) throw new TxConditionFailed(-1, true);
    }
    throw error;
  }
}

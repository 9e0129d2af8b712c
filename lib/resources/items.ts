import type { CallContext } from '../auth/principal.js';
import { commit, type Change } from '../audit/audit.js';
import { conflict } from '../core/errors.js';
import { TxConditionFailed, type TxItem } from '../store/tx.js';

export { deleteAt, listItems, putAt, putNew, readItem } from './store.js';

/**
 * The item plumbing of the small stores (federation, S/KEY, time-locks): one item per record in the tenant
 * partition (lib/store/keys.ts), read consistently, listed a page at a time through
 * lib/store/pagination.ts, and changed with an optimistic `version` condition in one
 * transaction with its audit entry and outbox event (lib/audit/audit.ts).
 */
export type { Key } from './store.js';

/** Commits items + audit + event; a failed condition is a concurrent change (409) unless `onFailed` maps it. */
export async function commitChange(
  ctx: CallContext,
  items: TxItem[],
  change: Change,
  onFailed?: (index: number) => Error | undefined,
): Promise<void> {
  try {
    await commit(ctx, ctx.principal.tenantId, items, change);
  } catch (error) {
    if (error instanceof TxConditionFailed) {
      throw onFailed?.(error.index) ?? conflict('the record was changed concurrently; read it again before retrying');
    }
    throw error;
  }
}

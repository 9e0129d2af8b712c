import { transact, TxConditionFailed, type TxItem } from '../store/tx.js';

/**
 * Expiry notices (certificates, SAML metadata certificates): one event per item and warning
 * threshold, exactly once. The thresholds and the "which one applies now" rule live here; each
 * caller brings the conditional write that records the notice in the event's transaction.
 */
export const DAY_MS = 86_400_000;
/** Days before not_after at which a notice is due. */
export const EXPIRY_THRESHOLDS_DAYS: readonly number[] = [30, 7, 1];

/** The smallest threshold the item is within, or undefined when none applies yet (or it has expired). */
export function thresholdFor(notAfter: Date, now: Date, thresholds: readonly number[] = EXPIRY_THRESHOLDS_DAYS): number | undefined {
  const left = notAfter.getTime() - now.getTime();
  if (left <= 0) return undefined;
  return [...thresholds].sort((a, b) => a - b).find((t) => left <= t * DAY_MS);
}

/** Whole days left until `notAfter` (rounded up), as the notices report it. */
export const daysLeft = (notAfter: Date, now: Date): number => Math.ceil((notAfter.getTime() - now.getTime()) / DAY_MS);

/**
 * Writes a notice and its outbox event in one transaction; false when the notice's condition
 * refused it (already noticed at this threshold, or the item changed meanwhile: the next sweep
 * sees it).
 */
export async function emitNoticeOnce(items: TxItem[]): Promise<boolean> {
  try {
    await transact(items);
    return true;
  } catch (error) {
    if (error instanceof TxConditionFailed) return false;
    throw error;
  }
}

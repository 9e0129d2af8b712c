import type { Context } from 'aws-lambda';
import { sweepExpiredLeases, type SweepReport } from '../../lib/database/sweeper.js';

/**
 * The lease-expiry sweeper as a Lambda function, invoked by an EventBridge schedule (not a
 * route; infra/background.ts `LeaseSweeper`): revokes every lease past its expiry
 * (lib/database/sweeper.ts), starting no revocation in the last 10 s of the invocation.
 * Needs table read/write, KMS Decrypt (connection passwords) and network access to the
 * customers' database servers.
 */
export const sweep = async (_event?: unknown, context?: Pick<Context, 'getRemainingTimeInMillis'>): Promise<SweepReport> =>
  sweepExpiredLeases(context ? { stopAt: Date.now() + context.getRemainingTimeInMillis() - 10_000 } : {});

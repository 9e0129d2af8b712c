/**
 * The local runtime's lease-expiry sweeper: lib/database/sweeper.ts on a timer in this
 * process (every LEASE_SWEEP_INTERVAL_SECONDS, default 60), as the EventBridge schedule
 * runs functions/database/sweeper.sweep in AWS. Passes never overlap.
 */
export function startLeaseSweeper(): () => void {
  let running = false;
  let stopped = false;
  const every = Number(process.env.LEASE_SWEEP_INTERVAL_SECONDS ?? 60) * 1000;
  const timer = setInterval(() => {
    if (running || stopped) return;
    running = true;
    import('../../lib/database/sweeper.js')
      .then(({ sweepExpiredLeases }) => sweepExpiredLeases())
      .catch((error: unknown) => process.stderr.write(`lease sweeper: ${(error as Error).message ?? String(error)}\n`))
      .finally(() => {
        running = false;
      });
  }, every);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}

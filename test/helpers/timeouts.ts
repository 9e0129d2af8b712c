/**
 * A test's or hook's own time limit, scaled as the suite's defaults are (vitest.config.ts
 * `timeoutScale`: TEST_TIMEOUT_SCALE, or the load per core when the run started, which the
 * config hands every worker as TEST_TIMEOUT_SCALE). `it('…', fn, scaled(240_000))`.
 */
export function scaled(ms: number): number {
  const scale = Number(process.env.TEST_TIMEOUT_SCALE);
  return Number.isFinite(scale) && scale > 0 ? Math.round(ms * scale) : ms;
}

/**
 * Polls `check` every 100 ms until it holds, for at most `ms` (scaled); then its last answer.
 * For what the runtime does after it answered (the stream relay, the audit writer, a sweep):
 * those run in functions that may start cold on a loaded machine, and a ceiling costs nothing
 * when the condition holds sooner, so the default is generous.
 */
export async function until(check: () => Promise<boolean>, ms = 30_000): Promise<boolean> {
  const end = Date.now() + scaled(ms);
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return check();
}

/**
 * How long a test waits for the local stream relay to reach a record (a lease's expiry listing,
 * an audit entry's listing). The local runtime relays DynamoDB Local's one shard with one
 * poller, so a burst of writes queues ahead of everything after it. A lease waited more than 30
 * s for its listing in CI's command on a fresh clone (four source files at once; the runtime's
 * log held no relay error). The likely burst, not measured: the authorization matrix's 403s,
 * each audited, each audit entry then listed by the relay. In AWS the table's partitions are
 * relayed in parallel, shard by shard.
 */
export const RELAY_WAIT_MS = 120_000;

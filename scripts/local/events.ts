/**
 * The local runtime's event pipeline (DESIGN.md §10, the "embedded" column): the outbox
 * relay and the webhook delivery worker on timers in this process, over the in-process
 * queue (lib/events/memory-queue.ts), which keeps SQS's semantics. In AWS the same code runs
 * as functions/webhooks/relay.ts (scheduled) and functions/webhooks/worker.ts (SQS).
 *
 * Call before anything reads the configuration: it sets the local defaults (in-process
 * queue, loopback receivers allowed for accounts that opt in, quick retries) unless the
 * environment already sets them.
 */
export function startLocalEvents(opts: { relayEveryMs?: number; workerEveryMs?: number } = {}): () => void {
  const defaults: Record<string, string> = {
    QUEUE_PROVIDER: 'memory',
    WEBHOOKS_ALLOW_LOOPBACK: '1',
    WEBHOOK_RETRY_BASE_MS: '400',
    WEBHOOK_RETRY_MAX_MS: '5000',
    WEBHOOK_TIMEOUT_MS: '5000',
  };
  for (const [k, v] of Object.entries(defaults)) process.env[k] ??= v;

  let stopped = false;
  const timers: NodeJS.Timeout[] = [];
  const loop = (everyMs: number, pass: () => Promise<unknown>) => {
    let running = false;
    const t = setInterval(() => {
      if (running || stopped) return;
      running = true;
      pass()
        .catch((error: unknown) => process.stderr.write(`event pipeline: ${(error as Error).stack ?? String(error)}\n`))
        .finally(() => {
          running = false;
        });
    }, everyMs);
    t.unref();
    timers.push(t);
  };

  const ready = (async () => {
    const [{ memoryQueue }, { setQueue }, { relayPass }, { processMessage }] = await Promise.all([
      import('../../lib/events/memory-queue.js'),
      import('../../lib/events/queue.js'),
      import('../../lib/events/relay.js'),
      import('../../lib/events/delivery.js'),
    ]);
    const q = memoryQueue({ visibilityTimeoutMs: 30_000, maxReceiveCount: 25 });
    setQueue(q);
    return { q, relayPass, processMessage };
  })();

  loop(opts.relayEveryMs ?? 250, async () => {
    const { relayPass } = await ready;
    await relayPass(2_000);
  });
  loop(opts.workerEveryMs ?? 100, async () => {
    const { q, processMessage } = await ready;
    const batch = q.receive(16);
    await Promise.all(batch.map((m) => processMessage(q, m, 'poll')));
  });

  return () => {
    stopped = true;
    for (const t of timers) clearInterval(t);
  };
}

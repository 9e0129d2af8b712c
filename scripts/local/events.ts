import type { StreamMapping } from './streams.js';

/**
 * The local runtime's event pipeline (DESIGN.md §10, the "embedded" column): the outbox
 * relay fed by the table's stream on DynamoDB Local (scripts/local/streams.ts, with the
 * mapping of lib/events/relay.ts: the path AWS takes) and the webhook delivery worker on a
 * timer, in this process, over the in-process queue (lib/events/memory-queue.ts), which keeps
 * SQS's semantics. In AWS the same code runs as functions/webhooks/relay.ts (the stream's
 * event source) and functions/webhooks/worker.ts (SQS).
 *
 * Call before anything reads the configuration: it sets the local defaults (in-process
 * queue, loopback receivers allowed for accounts that opt in, quick retries) unless the
 * environment already sets them.
 */
export function startLocalEvents(opts: { streamEndpoint: string; tableName: string; workerEveryMs?: number }): () => void {
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
    const [{ memoryQueue }, { setQueue }, { processMessage }] = await Promise.all([
      import('../../lib/events/memory-queue.js'),
      import('../../lib/events/queue.js'),
      import('../../lib/events/delivery.js'),
    ]);
    const q = memoryQueue({ visibilityTimeoutMs: 30_000, maxReceiveCount: 25 });
    setQueue(q);
    return { q, processMessage };
  })();

  const relay = (async () => {
    const [{ startStreamPoller }, { OUTBOX_STREAM }, { handler }] = await Promise.all([
      import('./streams.js'),
      import('../../lib/events/relay.js'),
      import('../../functions/webhooks/relay.js'),
    ]);
    await ready;
    return startStreamPoller({
      endpoint: opts.streamEndpoint,
      name: 'outbox relay (stream)',
      mapping: localRelayMapping(opts.tableName, OUTBOX_STREAM),
      invoke: async (event) => {
        try {
          return { ok: true, result: await handler(event as never) };
        } catch (error) {
          return { ok: false, error: { errorType: (error as Error).name, errorMessage: (error as Error).message } };
        }
      },
    });
  })();
  loop(opts.workerEveryMs ?? 100, async () => {
    const { q, processMessage } = await ready;
    const batch = q.receive(16);
    await Promise.all(batch.map((m) => processMessage(q, m, 'poll')));
  });

  return () => {
    stopped = true;
    for (const t of timers) clearInterval(t);
    void relay.then((p) => p.stop());
  };
}

/** The relay's mapping as infra/background.ts declares it (the artifact runtime reads it from the template). */
export function localRelayMapping(tableName: string, s: typeof import('../../lib/events/relay.js').OUTBOX_STREAM): StreamMapping {
  return {
    tableName,
    filters: s.filters,
    batchSize: s.batchSize,
    maxBatchingWindowSeconds: s.maxBatchingWindowSeconds,
    startingPosition: 'TRIM_HORIZON',
    reportBatchItemFailures: true,
    bisectOnError: true,
    retryAttempts: s.retryAttempts,
    parallelizationFactor: s.parallelizationFactor,
  };
}

/**
 * The embedded runtime's jobs worker (lib/tools/jobs.ts): an in-process queue with SQS's
 * semantics (lib/events/memory-queue.ts) that POST /extraction/db sends to, drained on a
 * timer in this process. In AWS the jobs queue is SQS and functions/tools/extraction-worker.ts
 * its consumer; the artifact runtime serves that queue and mapping from the template.
 */
export function startLocalJobs(opts: { everyMs?: number } = {}): () => void {
  let stopped = false;
  let running = false;
  const ready = (async () => {
    const [{ memoryQueue }, { setLocalJobQueue }, { runExtractionJob }] = await Promise.all([
      import('../../lib/events/memory-queue.js'),
      import('../../lib/tools/jobs.js'),
      import('../../lib/tools/extraction.js'),
    ]);
    const q = memoryQueue({ visibilityTimeoutMs: 300_000, maxReceiveCount: 3 });
    setLocalJobQueue(q);
    return { q, runExtractionJob };
  })();
  const timer = setInterval(() => {
    if (running || stopped) return;
    running = true;
    (async () => {
      const { q, runExtractionJob } = await ready;
      for (const m of q.receive(4)) {
        await runExtractionJob(JSON.parse(m.body) as { tenant_id: string; job_id: string });
        await q.delete(m.receiptHandle);
      }
    })()
      .catch((error: unknown) => process.stderr.write(`jobs worker: ${(error as Error).stack ?? String(error)}\n`))
      .finally(() => {
        running = false;
      });
  }, opts.everyMs ?? 200);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}

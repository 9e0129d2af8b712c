/**
 * A DynamoDB stream event-source mapping, run locally over DynamoDB Local's streams API, as
 * Lambda runs one: one poll loop per shard (a child shard waits for its parent to finish), so
 * a shard never has two invocations in flight; records that match none of the mapping's
 * filter patterns are dropped without an invocation; batches of up to batchSize records,
 * gathered for up to the batching window; on a reported batch item failure the records
 * before it are checkpointed and the batch is retried from it; on a function error the batch
 * is retried (halved first when the mapping bisects), and a record that fails more than
 * retryAttempts times is skipped with a log line. Both local runtimes use it: the source
 * runtime (scripts/local/events.ts, the mapping of lib/events/relay.ts) and the artifact
 * runtime (scripts/local/artifact/sources.ts, the mapping as the template declares it).
 */
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record,
  type Shard,
} from '@aws-sdk/client-dynamodb-streams';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';

export interface StreamMapping {
  readonly tableName: string;
  /** Lambda event filter patterns (FilterCriteria.Filters[].Pattern, parsed); none: every record. */
  readonly filters: readonly unknown[];
  readonly batchSize: number;
  readonly maxBatchingWindowSeconds: number;
  readonly startingPosition: 'TRIM_HORIZON' | 'LATEST';
  readonly reportBatchItemFailures: boolean;
  readonly bisectOnError: boolean;
  /** -1: retry until the record expires (Lambda's default). */
  readonly retryAttempts: number;
  readonly parallelizationFactor: number;
}

export type Invocation = { ok: true; result: unknown } | { ok: false; error: { errorType: string; errorMessage: string } };

export interface StreamPoller {
  /** Invocations and failed invocations so far. */
  readonly counts: { invocations: number; failures: number };
  stop(): Promise<void>;
}

const REGION = 'us-east-1';
/** The pause after a read that found nothing: Lambda reads a shard four times a second. */
const IDLE_MS = 250;
/**
 * After this many empty reads in a row (2 s of a quiet shard), each pause doubles, up to
 * IDLE_MAX_MS, until a read finds records again. A quiet runtime read its stream four times a
 * second: about 4 % of a core in the runtime and 6 % in DynamoDB Local for nothing (the suite's
 * source runtime waits two minutes for its first test file). A quiet shard's first record now
 * waits at most a second longer.
 */
const IDLE_READS_BEFORE_BACKOFF = 8;
const IDLE_MAX_MS = 1_000;
/** The pause after `empty` empty reads in a row. */
export const idlePause = (empty: number): number =>
  empty <= IDLE_READS_BEFORE_BACKOFF ? IDLE_MS : Math.min(IDLE_MAX_MS, IDLE_MS * 2 ** (empty - IDLE_READS_BEFORE_BACKOFF));
/**
 * How often the shards are listed again while every known shard is still open. A new shard
 * appears when one closes, and a closing shard's loop asks for a listing at once, so this
 * period only bounds how late a shard that appears some other way (a stream turned off and on)
 * is found. Listing every second was two requests a second per mapping for nothing.
 */
const DISCOVERY_MS = 10_000;
/** How soon the shards are listed again when no shard is open (the stream is new, or a listing failed), or after a shard's loop failed. */
const DISCOVERY_RETRY_MS = 1_000;

/** Does `value` match a Lambda filter pattern (the subset the deployment uses: values, prefix, exists, anything-but)? */
export function matchesPattern(pattern: unknown, value: unknown): boolean {
  if (Array.isArray(pattern)) {
    return pattern.some((rule) => {
      if (rule !== null && typeof rule === 'object') {
        const [op, arg] = Object.entries(rule as Record<string, unknown>)[0] ?? [];
        switch (op) {
          case 'prefix':
            return typeof value === 'string' && value.startsWith(String(arg));
          case 'exists':
            return (value !== undefined) === Boolean(arg);
          case 'anything-but':
            return value !== undefined && !(Array.isArray(arg) ? arg : [arg]).includes(value);
          default:
            throw new Error(`filter operator ${String(op)} is not supported by the local stream poller`);
        }
      }
      return value === rule;
    });
  }
  if (pattern !== null && typeof pattern === 'object') {
    if (value === null || typeof value !== 'object') return false;
    return Object.entries(pattern as Record<string, unknown>).every(([k, p]) => matchesPattern(p, (value as Record<string, unknown>)[k]));
  }
  throw new Error(`filter pattern ${JSON.stringify(pattern)}: a pattern's leaves are arrays`);
}

/** An attribute value as Lambda's event JSON carries it (binary as base64). */
function attr(v: unknown): unknown {
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (Array.isArray(v)) return v.map(attr);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, attr(x)]));
  return v;
}

/** A streams API record as the Lambda event's record. */
export function lambdaRecord(r: _Record, streamArn: string): Record<string, unknown> {
  const d = r.dynamodb ?? {};
  return {
    eventID: r.eventID,
    eventName: r.eventName,
    eventVersion: r.eventVersion ?? '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: r.awsRegion ?? REGION,
    dynamodb: {
      ...(d.ApproximateCreationDateTime ? { ApproximateCreationDateTime: Math.floor(d.ApproximateCreationDateTime.getTime() / 1000) } : {}),
      Keys: attr(d.Keys),
      ...(d.NewImage ? { NewImage: attr(d.NewImage) } : {}),
      ...(d.OldImage ? { OldImage: attr(d.OldImage) } : {}),
      SequenceNumber: d.SequenceNumber,
      SizeBytes: d.SizeBytes,
      StreamViewType: d.StreamViewType,
    },
    eventSourceARN: streamArn,
  };
}

export function startStreamPoller(opts: {
  endpoint: string;
  mapping: StreamMapping;
  invoke: (event: { Records: Record<string, unknown>[] }, source: { shardId: string }) => Promise<Invocation>;
  log?: NodeJS.WritableStream;
  name?: string;
}): StreamPoller {
  const { mapping } = opts;
  if (mapping.parallelizationFactor !== 1) {
    throw new Error(
      `stream mapping on ${mapping.tableName}: ParallelizationFactor ${mapping.parallelizationFactor}; the local poller runs one batch per shard`,
    );
  }
  const log = opts.log ?? process.stderr;
  const name = opts.name ?? `stream ${mapping.tableName}`;
  const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
  const streams = new DynamoDBStreamsClient({ region: REGION, endpoint: opts.endpoint, credentials });
  const tables = new DynamoDBClient({ region: REGION, endpoint: opts.endpoint, credentials });
  const counts = { invocations: 0, failures: 0 };
  let running = true;
  const loops = new Map<string, Promise<void>>();
  let open = 0;
  const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));
  /** The discovery loop's pause, cut short by a shard that closed or by stop(), even one that came while it was listing. */
  let woken = false;
  let endPause = () => {};
  const wake = () => {
    woken = true;
    endPause();
  };
  const pause = (ms: number) =>
    new Promise<void>((ok) => {
      if (woken) return ok();
      const timer = setTimeout(ok, ms);
      endPause = () => {
        clearTimeout(timer);
        ok();
      };
    }).then(() => {
      woken = false;
      endPause = () => {};
    });
  const matches = (record: Record<string, unknown>) => mapping.filters.length === 0 || mapping.filters.some((f) => matchesPattern(f, record));

  /** Invokes with `batch`; returns how many records from the head are done (checkpointed). */
  const attempts = new Map<string, number>();
  const deliver = async (shardId: string, batch: Record<string, unknown>[]): Promise<{ done: number; error: boolean }> => {
    counts.invocations++;
    const outcome = await opts.invoke({ Records: batch }, { shardId });
    let done = batch.length;
    let error = false;
    if (!outcome.ok) {
      counts.failures++;
      error = true;
      done = 0;
      log.write(`${name}: ${outcome.error.errorType}: ${outcome.error.errorMessage}\n`);
    } else if (mapping.reportBatchItemFailures) {
      const failures = ((outcome.result as { batchItemFailures?: { itemIdentifier?: string }[] } | null)?.batchItemFailures ?? []).map(
        (f) => f.itemIdentifier,
      );
      const seqs = batch.map((r) => (r.dynamodb as { SequenceNumber: string }).SequenceNumber);
      if (failures.length > 0) {
        // an identifier that names no record of the batch fails the whole batch (as Lambda does)
        const at = failures.map((id) => (id ? seqs.indexOf(id) : -1));
        done = at.some((i) => i < 0) ? 0 : Math.min(...at);
      }
    }
    if (done < batch.length) {
      const head = (batch[done]!.dynamodb as { SequenceNumber: string }).SequenceNumber;
      const n = (attempts.get(head) ?? 0) + 1;
      attempts.set(head, n);
      if (mapping.retryAttempts >= 0 && n > mapping.retryAttempts) {
        log.write(`${name}: record ${head} failed ${n} times; skipped (retry attempts exhausted)\n`);
        attempts.delete(head);
        return { done: done + 1, error };
      }
    }
    return { done, error };
  };

  const pollShard = async (streamArn: string, shard: Shard) => {
    const parent = shard.ParentShardId ? loops.get(shard.ParentShardId) : undefined;
    if (parent) await parent;
    let iterator: string | undefined = (
      await streams.send(new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: shard.ShardId!, ShardIteratorType: mapping.startingPosition }))
    ).ShardIterator;
    const pending: Record<string, unknown>[] = [];
    let since = 0;
    let limit = mapping.batchSize;
    let empty = 0;
    while (running && (iterator || pending.length > 0)) {
      if (iterator && pending.length < mapping.batchSize) {
        const out = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }));
        iterator = out.NextShardIterator;
        // records the filters drop still mean a busy shard: the reads stay at IDLE_MS
        empty = (out.Records ?? []).length > 0 ? 0 : empty + 1;
        const fresh = (out.Records ?? []).map((r) => lambdaRecord(r, streamArn)).filter(matches);
        if (fresh.length > 0 && pending.length === 0) since = Date.now();
        pending.push(...fresh);
      }
      if (pending.length === 0) {
        await sleep(idlePause(empty));
        continue;
      }
      const windowOpen = Date.now() - since < mapping.maxBatchingWindowSeconds * 1000;
      if (iterator && pending.length < mapping.batchSize && windowOpen) {
        await sleep(Math.min(IDLE_MS, mapping.maxBatchingWindowSeconds * 1000));
        continue;
      }
      const batch = pending.slice(0, Math.min(limit, mapping.batchSize));
      const { done, error } = await deliver(shard.ShardId!, batch);
      pending.splice(0, done);
      // bisect: a failed batch is retried in halves until the failing record is alone
      limit = error && mapping.bisectOnError ? Math.max(1, Math.ceil(batch.length / 2)) : mapping.batchSize;
      if (done === 0) await sleep(IDLE_MS);
    }
  };

  const discover = async () => {
    while (running) {
      try {
        const table = await tables.send(new DescribeTableCommand({ TableName: mapping.tableName }));
        const streamArn = table.Table?.LatestStreamArn;
        if (!streamArn) throw new Error(`table ${mapping.tableName} has no stream`);
        const shards = (await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }))).StreamDescription?.Shards ?? [];
        for (const shard of shards) {
          if (loops.has(shard.ShardId!)) continue;
          open++;
          loops.set(
            shard.ShardId!,
            pollShard(streamArn, shard).then(
              () => {
                open--;
                wake(); // the shard closed: its children are to be found now
              },
              (error: unknown) => {
                open--;
                if (running) log.write(`${name}: shard ${shard.ShardId}: ${(error as Error).message}\n`);
                loops.delete(shard.ShardId!); // rediscovered by a listing a second later
                setTimeout(wake, DISCOVERY_RETRY_MS).unref();
              },
            ),
          );
        }
      } catch (error) {
        if (running) log.write(`${name}: ${(error as Error).message}\n`);
      }
      if (running) await pause(open > 0 ? DISCOVERY_MS : DISCOVERY_RETRY_MS);
    }
  };
  const discovering = discover();

  return {
    counts,
    async stop() {
      running = false;
      wake();
      await discovering;
      await Promise.all(loops.values());
      streams.destroy();
      tables.destroy();
    },
  };
}

/**
 * The deployment's queues and event sources: every AWS::SQS::Queue on fauxqs (an
 * SQS-compatible engine; attributes and redrive policy from the template), a poller per
 * AWS::Lambda::EventSourceMapping with the mapping's batch size and, when the mapping
 * reports batch item failures, deletion of only the records the function did not report
 * (otherwise a failed invocation leaves the whole batch for redelivery), each DynamoDB stream
 * mapping with its filter criteria and batch settings on DynamoDB Local's streams API
 * (scripts/local/streams.ts: one poll loop per shard), and every
 * scheduled AWS::Events::Rule run on a timer, compressed by `speedup` (rate(1 minute) runs
 * every 5 s at the default 12, ARTIFACT_SCHEDULE_SPEEDUP) so that tests see the pipeline move.
 * At 120 (every 500 ms) the lease sweeper alone made 71 % of the AWS requests of a whole run
 * (ARTIFACT_AWS_TRACE: 14,560 of the first 20,586, about 24 listing queries a sweep), to find
 * nothing almost every time; at 30 (every 2 s) its environment used 89 CPU-s in the first 22
 * minutes of a 29-minute `npm test`, and the certificate expiry sweep (rate(1 hour), every 2
 * minutes) read every account of the table each time. The schedules' work grows with the run's wall time, so
 * a slow run paid for being slow.
 */
import { randomUUID } from 'node:crypto';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { QueueSpec } from './deployment.js';
import { ACCOUNT, type Deployment, REGION } from './deployment.js';
import type { FunctionHost } from './host.js';
import { pollQueue } from '../sqs.js';
import { type StreamPoller, startStreamPoller } from '../streams.js';

export interface Queues {
  readonly endpoint: string;
  /** Queue URL by the queue's logical path. */
  readonly urls: ReadonlyMap<string, string>;
  stop(): Promise<void>;
}

/** A queue's physical name: its QueueName, else what CloudFormation would derive (stack-id-suffix, ≤ 80 chars). */
export function queueName(spec: QueueSpec): string {
  if (spec.properties.QueueName) return String(spec.properties.QueueName);
  return spec.key.replace(/[^A-Za-z0-9_-]+/g, '-').slice(-80);
}

const ATTRIBUTES = ['DelaySeconds', 'MaximumMessageSize', 'MessageRetentionPeriod', 'ReceiveMessageWaitTimeSeconds', 'VisibilityTimeout'];

export async function startQueues(specs: readonly QueueSpec[]): Promise<Queues> {
  const { startFauxqs } = await import('fauxqs');
  const server = await startFauxqs({ port: 0, logger: false });
  const urls = new Map<string, string>();
  const arn = (spec: QueueSpec) => `arn:aws:sqs:${REGION}:${ACCOUNT}:${queueName(spec)}`;
  // dead-letter queues first: a redrive policy names an existing queue
  const ordered = [...specs].sort((a, b) => Number(Boolean(a.properties.RedrivePolicy)) - Number(Boolean(b.properties.RedrivePolicy)));
  for (const spec of ordered) {
    const attributes: Record<string, string> = {};
    for (const name of ATTRIBUTES) if (spec.properties[name] !== undefined) attributes[name] = String(spec.properties[name]);
    const redrive = spec.properties.RedrivePolicy as { deadLetterTargetArn?: unknown; maxReceiveCount?: unknown } | undefined;
    if (redrive) {
      const target = redrive.deadLetterTargetArn as { 'Fn::GetAtt'?: [string, string] } | undefined;
      const id = target?.['Fn::GetAtt']?.[0];
      const dlq = id && specs.find((s) => s.key === `${spec.key.slice(0, spec.key.lastIndexOf('/'))}/${id}`);
      if (!dlq) throw new Error(`${spec.key}: redrive target ${JSON.stringify(redrive.deadLetterTargetArn)} is not a queue of this stack`);
      attributes.RedrivePolicy = JSON.stringify({ deadLetterTargetArn: arn(dlq), maxReceiveCount: String(redrive.maxReceiveCount) });
    }
    const { queueUrl } = server.createQueue(queueName(spec), { attributes });
    // fauxqs names queues http://sqs.<region>.localhost:<port>/...; the SDK sends to the
    // queue URL's host, which needs no resolver as the loopback address
    urls.set(spec.key, `${server.address}${new URL(queueUrl).pathname}`);
  }
  return { endpoint: server.address, urls, stop: () => server.stop() };
}

/** The local clock of `rate(n unit)` schedules (cron expressions are refused: none is deployed). */
export function scheduleIntervalMs(expression: string, speedup: number): number {
  const m = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/.exec(expression);
  if (!m) throw new Error(`schedule ${expression}: only rate() expressions are run locally`);
  const unit = m[2]!.startsWith('minute') ? 60_000 : m[2]!.startsWith('hour') ? 3_600_000 : 86_400_000;
  return Math.max(250, Math.round((Number(m[1]) * unit) / speedup));
}

export interface Sources {
  stop(): Promise<void>;
  /** Invocations per event source / schedule and their failures, for the report. */
  readonly counts: Map<string, { invocations: number; failures: number }>;
}

export function startSources(opts: {
  deployment: Deployment;
  queues: Queues;
  /** DynamoDB Local (its streams API). */
  dynamoEndpoint: string;
  functions: FunctionHost;
  speedup?: number;
  log?: NodeJS.WritableStream;
}): Sources {
  const { deployment, queues, functions } = opts;
  const log = opts.log ?? process.stderr;
  const sqs = new SQSClient({ region: REGION, endpoint: queues.endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const counts = new Map<string, { invocations: number; failures: number }>();
  const count = (key: string, failed: boolean) => {
    const c = counts.get(key) ?? { invocations: 0, failures: 0 };
    c.invocations++;
    if (failed) c.failures++;
    counts.set(key, c);
  };
  // stop() aborts it: the queue pollers' long polls end at once, the schedules start no more runs
  const polling = new AbortController();
  const loops: Promise<void>[] = [];
  const timers: NodeJS.Timeout[] = [];

  for (const source of deployment.eventSources.filter((s) => s.enabled)) {
    const fn = deployment.functions.get(source.functionKey);
    const queueUrl = queues.urls.get(source.queueKey);
    if (!fn || !queueUrl) throw new Error(`event source ${source.queueKey} -> ${source.functionKey}: unknown queue or function`);
    const queueArn = `arn:aws:sqs:${REGION}:${ACCOUNT}:${queueUrl.slice(queueUrl.lastIndexOf('/') + 1)}`;
    const poll = () =>
      pollQueue({
        sqs,
        mapping: { queueUrl, queueArn, region: REGION, batchSize: source.batchSize, reportBatchItemFailures: source.reportBatchItemFailures },
        invoke: (event) => functions.invoke(fn, event),
        signal: polling.signal,
        name: `artifact event source ${fn.functionName}`,
        log,
        onInvocation: (ok) => count(fn.functionName, !ok),
      });
    // Lambda starts with several concurrent pollers per mapping
    loops.push(poll(), poll());
  }

  const pollers: StreamPoller[] = [];
  for (const source of deployment.streamSources.filter((s) => s.enabled)) {
    const fn = deployment.functions.get(source.functionKey);
    if (!fn) throw new Error(`stream source ${source.key}: unknown function ${source.functionKey}`);
    pollers.push(
      startStreamPoller({
        endpoint: opts.dynamoEndpoint,
        log,
        name: `artifact stream source ${fn.functionName}`,
        mapping: {
          tableName: source.tableName,
          filters: source.filters,
          batchSize: source.batchSize,
          maxBatchingWindowSeconds: source.maximumBatchingWindowSeconds,
          startingPosition: source.startingPosition,
          reportBatchItemFailures: source.reportBatchItemFailures,
          bisectOnError: source.bisectBatchOnFunctionError,
          retryAttempts: source.maximumRetryAttempts,
          parallelizationFactor: source.parallelizationFactor,
        },
        invoke: async (event) => {
          const outcome = await functions.invoke(fn, event);
          count(fn.functionName, !outcome.ok);
          return outcome;
        },
      }),
    );
  }

  for (const rule of deployment.schedules.filter((s) => s.enabled)) {
    const fn = deployment.functions.get(rule.functionKey);
    if (!fn) throw new Error(`schedule ${rule.key}: unknown function ${rule.functionKey}`);
    let busy = false;
    const timer = setInterval(
      async () => {
        if (busy || polling.signal.aborted) return;
        busy = true;
        try {
          const outcome = await functions.invoke(fn, {
            version: '0',
            id: randomUUID(),
            'detail-type': 'Scheduled Event',
            source: 'aws.events',
            account: ACCOUNT,
            time: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
            region: REGION,
            resources: [`arn:aws:events:${REGION}:${ACCOUNT}:rule/${rule.key.slice(rule.key.lastIndexOf('/') + 1)}`],
            detail: {},
          });
          count(fn.functionName, !outcome.ok);
          if (!outcome.ok) log.write(`artifact schedule ${fn.functionName}: ${outcome.error.errorType}: ${outcome.error.errorMessage}\n`);
        } catch (error) {
          if (!polling.signal.aborted) log.write(`artifact schedule ${fn.functionName}: ${(error as Error).message}\n`);
        } finally {
          busy = false;
        }
      },
      scheduleIntervalMs(rule.expression, opts.speedup ?? (Number(process.env.ARTIFACT_SCHEDULE_SPEEDUP) || 12)),
    );
    timers.push(timer);
  }

  return {
    counts,
    async stop() {
      polling.abort();
      for (const t of timers) clearInterval(t);
      await Promise.all([...loops, ...pollers.map((p) => p.stop())]);
      sqs.destroy();
    },
  };
}

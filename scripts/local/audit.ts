/**
 * The source runtime's audit queue (lib/audit/queue.ts): the queue and its dead-letter queue
 * on fauxqs, the local SQS engine (the same child process that serves the local S3 API,
 * scripts/local/s3.ts), with AUDIT_QUEUE's visibility timeout and redrive policy, and the
 * audit writer (functions/audit/writer.ts) invoked by an SQS mapping with
 * ReportBatchItemFailures (scripts/local/sqs.ts), in this process. So a read-only route's
 * entry takes the path it takes in AWS: SendMessage before the answer, the writer's put after.
 * The artifact runtime creates the same queues and mapping from the templates.
 */
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { pollQueue } from './sqs.js';

export const LOCAL_AUDIT_QUEUE = 'secrets-api-audit';

export interface LocalAudit {
  /** The queue's URL (AUDIT_QUEUE_URL) and the dead-letter queue's. */
  readonly queueUrl: string;
  readonly deadLetterUrl: string;
  /** Starts the writer's pollers (after the configuration is in place). */
  startWriter(log?: NodeJS.WritableStream): void;
  stop(): Promise<void>;
}

export async function createLocalAuditQueue(opts: { endpoint: string; region: string }): Promise<LocalAudit> {
  const { AUDIT_QUEUE } = await import('../../lib/audit/queue.js');
  const sqs = new SQSClient({ region: opts.region, endpoint: opts.endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  // fauxqs names queues http://sqs.<region>.<its host>:<port>/... (not even a valid URL when the
  // host is an address): the engine's own address, with the queue's path
  const local = (url: string) => `${opts.endpoint}${url.replace(/^[a-z]+:\/\/[^/]+/, '')}`;
  const dlq = await sqs.send(
    new CreateQueueCommand({
      QueueName: `${LOCAL_AUDIT_QUEUE}-dlq`,
      Attributes: { MessageRetentionPeriod: String(AUDIT_QUEUE.deadLetterRetentionDays * 86_400) },
    }),
  );
  const deadLetterUrl = local(dlq.QueueUrl!);
  const dlqArn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: deadLetterUrl, AttributeNames: ['QueueArn'] }))).Attributes!.QueueArn!;
  const main = await sqs.send(
    new CreateQueueCommand({
      QueueName: LOCAL_AUDIT_QUEUE,
      Attributes: {
        MessageRetentionPeriod: String(AUDIT_QUEUE.retentionDays * 86_400),
        VisibilityTimeout: String(AUDIT_QUEUE.visibilityTimeoutSeconds),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: String(AUDIT_QUEUE.maxReceiveCount) }),
      },
    }),
  );
  const queueUrl = local(main.QueueUrl!);
  const queueArn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }))).Attributes!.QueueArn!;

  const polling = new AbortController();
  const loops: Promise<void>[] = [];
  return {
    queueUrl,
    deadLetterUrl,
    startWriter(log = process.stderr) {
      const writer = import('../../functions/audit/writer.js');
      const poll = () =>
        pollQueue({
          sqs,
          mapping: { queueUrl, queueArn, region: opts.region, batchSize: AUDIT_QUEUE.batchSize, reportBatchItemFailures: true },
          invoke: async (event) => {
            try {
              return { ok: true, result: await (await writer).handler(event as never) };
            } catch (error) {
              return { ok: false, error: { errorType: (error as Error).name, errorMessage: (error as Error).message } };
            }
          },
          signal: polling.signal,
          name: 'audit writer (local SQS mapping)',
          log,
        });
      loops.push(poll(), poll());
    },
    async stop() {
      polling.abort();
      await Promise.all(loops);
      sqs.destroy();
    },
  };
}

/**
 * An SQS event-source mapping on fauxqs, the local SQS engine, as Lambda runs one: long-polls
 * the queue, invokes the function with the batch as an SQS event, and deletes what the
 * invocation settled — with ReportBatchItemFailures every record but the reported ones,
 * without it all or (a failed invocation) none; what is not deleted comes back after the
 * visibility timeout, and the queue's redrive policy parks it after maxReceiveCount receives.
 * The artifact runtime runs every mapping of the templates with it
 * (scripts/local/artifact/sources.ts); the source runtime the audit writer's
 * (scripts/local/audit.ts).
 */
import { DeleteMessageBatchCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Invocation } from './streams.js';

export interface QueueMapping {
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly region: string;
  readonly batchSize: number;
  readonly reportBatchItemFailures: boolean;
}

/** One poller of `mapping` (Lambda starts several per mapping); ends when `signal` aborts. */
export async function pollQueue(opts: {
  sqs: SQSClient;
  mapping: QueueMapping;
  invoke: (event: { Records: Record<string, unknown>[] }) => Promise<Invocation>;
  /** Ends the poller: aborts its receive in flight (a long poll of up to 20 s) and stops the loop. */
  signal: AbortSignal;
  /** What a failed invocation or poll is reported as. */
  name: string;
  log: NodeJS.WritableStream;
  onInvocation?: (ok: boolean) => void;
}): Promise<void> {
  const { sqs, mapping, log, signal } = opts;
  while (!signal.aborted) {
    try {
      // Lambda's pollers long-poll for 20 s; an idle queue costs a request per 20 s and poller
      // (at 1 s, the artifact runtime's six pollers sent 6 requests a second to find nothing; its
      // host used 4.3 CPU-s an idle minute before, 2.9 after, one minute each)
      const out = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: mapping.queueUrl,
          MaxNumberOfMessages: Math.min(10, mapping.batchSize),
          WaitTimeSeconds: 20,
          MessageSystemAttributeNames: ['All'],
          MessageAttributeNames: ['All'],
        }),
        { abortSignal: signal },
      );
      const messages = out.Messages ?? [];
      if (signal.aborted || messages.length === 0) continue;
      const event = {
        Records: messages.map((m) => ({
          messageId: m.MessageId,
          receiptHandle: m.ReceiptHandle,
          body: m.Body,
          attributes: m.Attributes ?? {},
          messageAttributes: m.MessageAttributes ?? {},
          md5OfBody: m.MD5OfBody,
          eventSource: 'aws:sqs',
          eventSourceARN: mapping.queueArn,
          awsRegion: mapping.region,
        })),
      };
      const outcome = await opts.invoke(event);
      let done = messages;
      if (!outcome.ok) {
        done = [];
        log.write(`${opts.name}: ${outcome.error.errorType}: ${outcome.error.errorMessage}\n`);
      } else if (mapping.reportBatchItemFailures) {
        const failed = new Set(
          ((outcome.result as { batchItemFailures?: { itemIdentifier: string }[] } | null)?.batchItemFailures ?? []).map((f) => f.itemIdentifier),
        );
        done = messages.filter((m) => !failed.has(m.MessageId!));
      }
      opts.onInvocation?.(outcome.ok);
      if (done.length) {
        await sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: mapping.queueUrl,
            Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
          }),
        );
      }
    } catch (error) {
      if (signal.aborted) break;
      log.write(`${opts.name}: ${(error as Error).message}\n`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

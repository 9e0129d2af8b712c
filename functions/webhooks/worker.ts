import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { processMessage } from '../../lib/events/delivery.js';
import { queue } from '../../lib/events/queue.js';
import { flushMetrics } from '../../lib/core/metrics.js';

/**
 * The webhook delivery worker in AWS: the SQS event source of the webhook queue (not a
 * route). Infra: event source mapping with ReportBatchItemFailures; queue visibility
 * timeout ≥ 6 × this function's timeout; a redrive policy to the DLQ as a safety net with
 * maxReceiveCount above WEBHOOK_MAX_ATTEMPTS (the worker dead-letters exhausted deliveries
 * itself, recording them). Grants: table read/write, KMS decrypt (the signing secret),
 * sqs:ChangeMessageVisibility on the queue, sqs:SendMessage on the DLQ; env
 * WEBHOOK_QUEUE_URL, WEBHOOK_DLQ_URL. A retry is a ChangeMessageVisibility to the backoff
 * delay plus a batch item failure, so SQS redelivers the message after it.
 */
export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  const q = await queue();
  const failed: { itemIdentifier: string }[] = [];
  await Promise.all(
    event.Records.map(async (r) => {
      const delivered = await processMessage(
        q,
        { messageId: r.messageId, body: r.body, receiptHandle: r.receiptHandle, receiveCount: Number(r.attributes?.ApproximateReceiveCount ?? 1) },
        'lambda',
      );
      if (!delivered) failed.push({ itemIdentifier: r.messageId });
    }),
  );
  flushMetrics(); // the KMS calls that opened the signing secrets
  return { batchItemFailures: failed };
}

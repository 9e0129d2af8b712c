import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { relayRecords } from '../../lib/events/relay.js';
import { flushMetrics } from '../../lib/core/metrics.js';

/**
 * The outbox relay in AWS (not a route): the table's stream event source (filtered to outbox
 * and audit inserts, one invocation per shard at a time; infra/background.ts) calls it with a
 * batch of records. It relays the outbox events to the webhook queue and seals the accounts'
 * new audit entries (lib/events/relay.ts), and reports the first record that failed, so the
 * stream retries from it (ReportBatchItemFailures). Grants: table read/write, KMS encrypt
 * (the audit signing key), sqs:SendMessage on the queue, the stream's read actions; env
 * WEBHOOK_QUEUE_URL, WEBHOOK_DLQ_URL.
 */
export async function handler(event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> {
  const { batchItemFailures } = await relayRecords(event.Records ?? []);
  flushMetrics(); // the audit sealing's KMS calls
  return { batchItemFailures };
}

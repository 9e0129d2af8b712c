import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { runExtractionJob } from '../../lib/tools/extraction.js';

/**
 * The jobs worker in AWS: the SQS event source of the jobs queue (not a route; infra/background.ts).
 * One message is one extraction job; a job records its own outcome, so only a crash of the
 * worker itself reports the message as failed (redelivered, then parked by the redrive policy).
 */
export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  const failed: { itemIdentifier: string }[] = [];
  for (const r of event.Records) {
    try {
      await runExtractionJob(JSON.parse(r.body) as { tenant_id: string; job_id: string });
    } catch {
      failed.push({ itemIdentifier: r.messageId });
    }
  }
  return { batchItemFailures: failed };
}

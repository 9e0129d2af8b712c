import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { writeAuditMessages } from '../../lib/audit/queue.js';
import { flushMetrics } from '../../lib/core/metrics.js';

/**
 * The audit writer in AWS (not a route; infra/background.ts): the SQS event source of the
 * audit queue, which the read-only routes send their audit entries to (lib/audit/queue.ts).
 * Each message's entry is written in its tenant's scope (TENANT_ROLE_ARN: a tenant-access
 * role allowed only PutItem of an audit entry in `T#<tenant>`), conditional on
 * attribute_not_exists(pk), so a redelivery is a no-op. A message that is not an audit entry
 * is refused and, like a failed write, reported as a batch item failure (ReportBatchItemFailures):
 * SQS redelivers it and, after the redrive policy's receives, parks it in the dead-letter queue.
 */
export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  const { batchItemFailures } = await writeAuditMessages(event.Records ?? []);
  flushMetrics();
  return { batchItemFailures };
}

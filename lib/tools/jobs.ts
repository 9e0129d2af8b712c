import { config } from '../config.js';
import { serviceUnavailable } from '../core/errors.js';

/**
 * The jobs queue of asynchronous tool jobs (database extraction): SQS in AWS (JOBS_QUEUE_URL,
 * consumed by functions/tools/extraction-worker.ts through its event-source mapping); in the
 * embedded runtime an in-process queue that scripts/local/jobs.ts installs and drains.
 */
interface JobSender {
  send(body: string): Promise<void>;
}

let local: JobSender | undefined;

/** For the embedded runtime: jobs go to this queue instead of SQS. */
export function setLocalJobQueue(q: JobSender | undefined): void {
  local = q;
}

export async function sendJob(body: string): Promise<void> {
  const cfg = config();
  if (cfg.QUEUE_PROVIDER === 'memory') {
    if (!local) throw serviceUnavailable('the jobs queue is not running in this process');
    return local.send(body);
  }
  if (!cfg.JOBS_QUEUE_URL) throw serviceUnavailable('the jobs queue is not configured (JOBS_QUEUE_URL)');
  const { SQSClient, SendMessageCommand } = await import('@aws-sdk/client-sqs');
  await new SQSClient({ region: cfg.AWS_REGION }).send(new SendMessageCommand({ QueueUrl: cfg.JOBS_QUEUE_URL, MessageBody: body }));
}

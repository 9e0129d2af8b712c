import { config } from '../config.js';
import type { QueuePort } from './queue-port.js';
import { observeClient } from '../core/metrics.js';

export type { QueuePort, ReceivedMessage } from './queue-port.js';

let port: QueuePort | undefined;

/** The configured queue, created once. */
export async function queue(): Promise<QueuePort> {
  if (!port) {
    const cfg = config();
    if (cfg.QUEUE_PROVIDER === 'memory') {
      const { memoryQueue } = await import('./memory-queue.js');
      port = memoryQueue();
    } else {
      if (!cfg.WEBHOOK_QUEUE_URL || !cfg.WEBHOOK_DLQ_URL)
        throw new Error('WEBHOOK_QUEUE_URL and WEBHOOK_DLQ_URL are required with QUEUE_PROVIDER=sqs');
      const [{ SQSClient }, { sqsQueue }] = await Promise.all([import('@aws-sdk/client-sqs'), import('./sqs-queue.js')]);
      port = sqsQueue(observeClient(new SQSClient({ region: cfg.AWS_REGION })), {
        queueUrl: cfg.WEBHOOK_QUEUE_URL,
        deadLetterUrl: cfg.WEBHOOK_DLQ_URL,
      });
    }
  }
  return port;
}

/** For tests and the local runtime: use this adapter instead of the configured one. */
export function setQueue(p: QueuePort | undefined): void {
  port = p;
}

import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { observeClient } from '../core/metrics.js';

/**
 * The audit queue's one SQS call (lib/audit/queue.ts), in a module of its own that queue.ts
 * imports on first use: the SQS client (tree-shaken to SendMessage) is evaluated only by a
 * function that sends an entry, not at every function's cold start.
 */
let client: SQSClient | undefined;

export async function sendMessage(region: string, queueUrl: string, body: string): Promise<void> {
  client ??= observeClient(new SQSClient({ region, maxAttempts: 3 }));
  await client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
}

import { ChangeMessageVisibilityCommand, DeleteMessageCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { QueuePort } from './queue-port.js';

/** SQS limits: DelaySeconds at most 15 minutes; VisibilityTimeout at most 12 hours. */
const MAX_DELAY_S = 900;
const MAX_VISIBILITY_S = 43_200;
const seconds = (ms: number, max: number) => Math.min(max, Math.max(0, Math.ceil(ms / 1000)));

/** The SQS adapter of the queue port: a standard queue and its dead-letter queue. */
export function sqsQueue(client: SQSClient, urls: { queueUrl: string; deadLetterUrl: string }): QueuePort {
  return {
    async send(body, delayMs = 0) {
      await client.send(
        new SendMessageCommand({
          QueueUrl: urls.queueUrl,
          MessageBody: body,
          ...(delayMs > 0 ? { DelaySeconds: seconds(delayMs, MAX_DELAY_S) } : {}),
        }),
      );
    },
    async sendToDeadLetter(body) {
      await client.send(new SendMessageCommand({ QueueUrl: urls.deadLetterUrl, MessageBody: body }));
    },
    async changeVisibility(receiptHandle, ms) {
      await client.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: urls.queueUrl,
          ReceiptHandle: receiptHandle,
          VisibilityTimeout: seconds(ms, MAX_VISIBILITY_S),
        }),
      );
    },
    async delete(receiptHandle) {
      await client.send(new DeleteMessageCommand({ QueueUrl: urls.queueUrl, ReceiptHandle: receiptHandle }));
    },
  };
}

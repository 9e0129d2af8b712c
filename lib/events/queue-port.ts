/**
 * The webhook queue port (docs/architecture.md, "Events"): the relay sends one message per (event,
 * webhook); the delivery worker receives it, and on failure either makes it visible again
 * later (backoff) or parks it in the dead-letter queue. Two adapters:
 *
 * - SQS (AWS): lib/events/sqs-queue.ts. The worker is the Lambda SQS event source
 *   (functions/webhooks/worker.ts); a retry is ChangeMessageVisibility + a batch item
 *   failure, a dead letter an explicit SendMessage to the DLQ.
 * - memory (local runtime): lib/events/memory-queue.ts, with SQS semantics: a received
 *   message is invisible for the visibility timeout and comes back unless deleted, its
 *   receive count grows with each receive, and after maxReceiveCount receives it moves to
 *   the dead-letter queue by itself (the redrive policy).
 */
export interface QueuePort {
  /** Sends a message, visible after `delayMs` (SQS: whole seconds, at most 15 minutes). */
  send(body: string, delayMs?: number): Promise<void>;
  /** Moves a message to the dead-letter queue. */
  sendToDeadLetter(body: string): Promise<void>;
  /** Hides a received message for `ms` more (the backoff before its next attempt). */
  changeVisibility(receiptHandle: string, ms: number): Promise<void>;
  /** Removes a received message (done, or moved to the dead-letter queue). */
  delete(receiptHandle: string): Promise<void>;
}

export interface ReceivedMessage {
  readonly messageId: string;
  readonly body: string;
  readonly receiptHandle: string;
  /** How many times the message has been received, this time included. */
  readonly receiveCount: number;
}

import { randomUUID } from 'node:crypto';
import type { QueuePort, ReceivedMessage } from './queue-port.js';

/**
 * The in-process queue of the local runtime, with the SQS semantics the worker relies on:
 * - a received message is invisible for the visibility timeout; unless deleted it becomes
 *   visible again and is received again (at-least-once), with its receive count + 1;
 * - a receipt handle is valid for one receive only: deleting or changing visibility with an
 *   older handle does nothing (as SQS ignores a stale handle's delete);
 * - once a message has been received maxReceiveCount times, the next time it would be
 *   received it moves to the dead-letter queue instead (the redrive policy).
 */
interface MemoryQueueOptions {
  readonly visibilityTimeoutMs?: number;
  readonly maxReceiveCount?: number;
  readonly now?: () => number;
}

interface Stored {
  readonly messageId: string;
  readonly body: string;
  visibleAt: number;
  receiveCount: number;
  receipt?: string;
}

interface DeadLetter {
  readonly messageId: string;
  readonly body: string;
  readonly receiveCount: number;
  readonly at: number;
}

interface MemoryQueue extends QueuePort {
  receive(max: number): ReceivedMessage[];
  /** Messages in the queue (visible or in flight). */
  size(): number;
  readonly deadLetters: DeadLetter[];
}

export function memoryQueue(opts: MemoryQueueOptions = {}): MemoryQueue {
  const visibility = opts.visibilityTimeoutMs ?? 30_000;
  const maxReceives = opts.maxReceiveCount ?? 25;
  const now = opts.now ?? Date.now;
  const messages = new Map<string, Stored>();
  const byReceipt = new Map<string, Stored>();
  const deadLetters: DeadLetter[] = [];
  const take = (receipt: string): Stored | undefined => {
    const m = byReceipt.get(receipt);
    return m && m.receipt === receipt && messages.has(m.messageId) ? m : undefined;
  };
  return {
    deadLetters,
    async send(body, delayMs = 0) {
      const messageId = randomUUID();
      messages.set(messageId, { messageId, body, visibleAt: now() + Math.max(0, delayMs), receiveCount: 0 });
    },
    async sendToDeadLetter(body) {
      deadLetters.push({ messageId: randomUUID(), body, receiveCount: 0, at: now() });
    },
    async changeVisibility(receipt, ms) {
      const m = take(receipt);
      if (m) m.visibleAt = now() + Math.max(0, ms);
    },
    async delete(receipt) {
      const m = take(receipt);
      if (m) {
        messages.delete(m.messageId);
        byReceipt.delete(receipt);
      }
    },
    receive(max) {
      const t = now();
      const out: ReceivedMessage[] = [];
      for (const m of messages.values()) {
        if (out.length >= max) break;
        if (m.visibleAt > t) continue;
        if (m.receipt) byReceipt.delete(m.receipt);
        if (m.receiveCount >= maxReceives) {
          messages.delete(m.messageId);
          deadLetters.push({ messageId: m.messageId, body: m.body, receiveCount: m.receiveCount, at: t });
          continue;
        }
        m.receiveCount += 1;
        m.visibleAt = t + visibility;
        m.receipt = randomUUID();
        byReceipt.set(m.receipt, m);
        out.push({ messageId: m.messageId, body: m.body, receiptHandle: m.receipt, receiveCount: m.receiveCount });
      }
      return out;
    },
    size: () => messages.size,
  };
}

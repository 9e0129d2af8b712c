import type { Context } from 'aws-lambda';
import { relayPass } from '../../lib/events/relay.js';

/**
 * The outbox relay in AWS (not a route): invoked every minute (EventBridge schedule), it
 * drains the outbox to the webhook queue and seals new audit entries, polling every second
 * until shortly before its timeout, so events leave within about a second. Grants: table
 * read/write, KMS decrypt + GenerateDataKey (the audit signing key), sqs:SendMessage on the
 * queue; env WEBHOOK_QUEUE_URL, WEBHOOK_DLQ_URL. Safe to run concurrently with itself.
 */
export async function handler(_event: unknown, context?: Pick<Context, 'getRemainingTimeInMillis'>) {
  const remaining = () => context?.getRemainingTimeInMillis() ?? 0;
  const total = { events: 0, messages: 0, sealed: 0 };
  do {
    const r = await relayPass(Math.max(1_000, remaining() - 10_000));
    total.events += r.events;
    total.messages += r.messages;
    total.sealed += r.sealed;
    if (remaining() > 12_000) await new Promise((ok) => setTimeout(ok, 1_000));
  } while (remaining() > 12_000);
  return total;
}

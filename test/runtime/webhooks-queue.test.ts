import { ChangeMessageVisibilityCommand, DeleteMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryQueue } from '../../lib/events/memory-queue.js';
import type { QueuePort } from '../../lib/events/queue.js';
import { sqsQueue } from '../../lib/events/sqs-queue.js';
import { useOwnConfig } from '../helpers/in-process.js';
import { api, newAccount } from '../helpers/api.js';
import { allowLoopback, createWebhook, deliveries, receiver, type Receiver } from '../api/webhooks.helpers.js';

const QUEUE = 'https://sqs.eu-west-1.amazonaws.com/111122223333/secrets-api-webhooks';
const DLQ = 'https://sqs.eu-west-1.amazonaws.com/111122223333/secrets-api-webhooks-dlq';

describe('SQS adapter (mocked: no SQS engine here) sends exactly these requests', () => {
  const sqs = mockClient(SQSClient);
  const port = sqsQueue(new SQSClient({ region: 'eu-west-1' }), { queueUrl: QUEUE, deadLetterUrl: DLQ });

  it('send: the body to the queue, DelaySeconds only for a delay, rounded up and capped at 15 minutes', async () => {
    sqs.reset();
    sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
    await port.send('{"a":1}');
    await port.send('{"b":2}', 1500);
    await port.send('{"c":3}', 3_600_000);
    expect(sqs.commandCalls(SendMessageCommand).map((c) => c.args[0].input)).toEqual([
      { QueueUrl: QUEUE, MessageBody: '{"a":1}' },
      { QueueUrl: QUEUE, MessageBody: '{"b":2}', DelaySeconds: 2 },
      { QueueUrl: QUEUE, MessageBody: '{"c":3}', DelaySeconds: 900 },
    ]);
  });

  it('sendToDeadLetter, changeVisibility (seconds, at most 12 h) and delete', async () => {
    sqs.reset();
    sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
    await port.sendToDeadLetter('{"dead":true}');
    await port.changeVisibility('rh-1', 90_000);
    await port.changeVisibility('rh-2', 100 * 3600_000);
    await port.delete('rh-3');
    expect(sqs.commandCalls(SendMessageCommand)[0]!.args[0].input).toEqual({ QueueUrl: DLQ, MessageBody: '{"dead":true}' });
    expect(sqs.commandCalls(ChangeMessageVisibilityCommand).map((c) => c.args[0].input)).toEqual([
      { QueueUrl: QUEUE, ReceiptHandle: 'rh-1', VisibilityTimeout: 90 },
      { QueueUrl: QUEUE, ReceiptHandle: 'rh-2', VisibilityTimeout: 43_200 },
    ]);
    expect(sqs.commandCalls(DeleteMessageCommand)[0]!.args[0].input).toEqual({ QueueUrl: QUEUE, ReceiptHandle: 'rh-3' });
  });
});

describe('in-process queue: SQS semantics', () => {
  it('hides a received message for the visibility timeout, then redelivers it with a higher receive count', async () => {
    let now = 1_000;
    const q = memoryQueue({ visibilityTimeoutMs: 100, maxReceiveCount: 3, now: () => now });
    await q.send('m1');
    const [first] = q.receive(10);
    expect(first).toMatchObject({ body: 'm1', receiveCount: 1 });
    expect(q.receive(10)).toEqual([]);
    now += 99;
    expect(q.receive(10)).toEqual([]);
    now += 1;
    const [second] = q.receive(10);
    expect(second).toMatchObject({ messageId: first!.messageId, body: 'm1', receiveCount: 2 });
    // the first receipt is stale: deleting with it does nothing
    await q.delete(first!.receiptHandle);
    expect(q.size()).toBe(1);
    await q.delete(second!.receiptHandle);
    expect(q.size()).toBe(0);
  });

  it('honours send delays and visibility changes (the retry backoff)', async () => {
    let now = 0;
    const q = memoryQueue({ visibilityTimeoutMs: 1000, now: () => now });
    await q.send('later', 500);
    expect(q.receive(1)).toEqual([]);
    now = 500;
    const [m] = q.receive(1);
    await q.changeVisibility(m!.receiptHandle, 50);
    now = 549;
    expect(q.receive(1)).toEqual([]);
    now = 550;
    expect(q.receive(1)[0]).toMatchObject({ body: 'later', receiveCount: 2 });
  });

  it('moves a message to the dead-letter queue after maxReceiveCount receives', async () => {
    let now = 0;
    const q = memoryQueue({ visibilityTimeoutMs: 10, maxReceiveCount: 2, now: () => now });
    await q.send('poison');
    for (let i = 1; i <= 2; i++) {
      expect(q.receive(1)[0]).toMatchObject({ receiveCount: i });
      now += 10;
    }
    expect(q.receive(1)).toEqual([]);
    expect(q.size()).toBe(0);
    expect(q.deadLetters).toEqual([expect.objectContaining({ body: 'poison', receiveCount: 2 })]);
  });
});

describe('the AWS worker entry point (functions/webhooks/worker.ts) with SQS mocked, against the real table', () => {
  const sqs = mockClient(SQSClient);
  let failing: Receiver;
  let okReceiver: Receiver;
  let handler: (e: SQSEvent) => Promise<{ batchItemFailures: { itemIdentifier: string }[] }>;
  let setQueue: (p: QueuePort | undefined) => void;
  let restoreConfig: (() => void) | undefined;

  beforeAll(async () => {
    restoreConfig = useOwnConfig({ WEBHOOKS_ALLOW_LOOPBACK: '1', WEBHOOK_RETRY_BASE_MS: '2000', WEBHOOK_RETRY_MAX_MS: '2000' });
    failing = await receiver(() => ({ status: 500 }));
    okReceiver = await receiver(() => ({ status: 200 }));
    ({ handler } = await import('../../functions/webhooks/worker.js'));
    ({ setQueue } = await import('../../lib/events/queue.js'));
    setQueue(sqsQueue(new SQSClient({ region: 'eu-west-1' }), { queueUrl: QUEUE, deadLetterUrl: DLQ }));
  });
  afterAll(async () => {
    setQueue(undefined);
    await failing.close();
    await okReceiver.close();
    sqs.restore();
    restoreConfig?.();
  });

  const record = (id: string, body: unknown, receiveCount = 1): SQSEvent['Records'][number] =>
    ({
      messageId: id,
      receiptHandle: `rh-${id}`,
      body: JSON.stringify(body),
      attributes: { ApproximateReceiveCount: String(receiveCount) },
    }) as never;

  it('a failed attempt: ChangeMessageVisibility to the backoff and a batch item failure; a success: nothing (Lambda deletes); the last attempt: the DLQ', async () => {
    sqs.reset();
    sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
    sqs.on(ChangeMessageVisibilityCommand).resolves({});
    const a = await newAccount('sqsw');
    await allowLoopback(a, { max_attempts: 2 });
    const bad = await createWebhook(a, { url: failing.url, events: ['webhook.test'] });
    const good = await createWebhook(a, { url: okReceiver.url, events: ['webhook.test'] });
    const event = (id: string, webhookId: string) => ({
      v: 1,
      tenant_id: a.tenantId,
      webhook_id: webhookId,
      event: { id, type: 'webhook.test', timestamp: new Date().toISOString(), tenant_id: a.tenantId, data: { webhook_id: webhookId } },
    });
    const e1 = '01900000-0000-7000-8000-0000000000a1';
    const e2 = '01900000-0000-7000-8000-0000000000a2';
    const m1 = event(e1, bad.id);
    const m2 = event(e2, good.id);
    const first = await handler({ Records: [record('m1', m1), record('m2', m2)] });
    expect(first.batchItemFailures).toEqual([{ itemIdentifier: 'm1' }]);
    const vis = sqs.commandCalls(ChangeMessageVisibilityCommand).map((c) => c.args[0].input);
    expect(vis).toEqual([{ QueueUrl: QUEUE, ReceiptHandle: 'rh-m1', VisibilityTimeout: expect.any(Number) }]);
    expect(vis[0]!.VisibilityTimeout).toBeGreaterThanOrEqual(1);
    expect(vis[0]!.VisibilityTimeout).toBeLessThanOrEqual(2);
    expect(okReceiver.received.length).toBe(1);

    const second = await handler({ Records: [record('m1', m1, 2)] });
    expect(second.batchItemFailures).toEqual([]);
    expect(sqs.commandCalls(SendMessageCommand).map((c) => c.args[0].input)).toEqual([{ QueueUrl: DLQ, MessageBody: JSON.stringify(m1) }]);
    const [dead] = await deliveries(a, bad.id);
    expect(dead).toMatchObject({ id: e1, status: 'dead', attempt_count: 2 });
    const [ok] = await deliveries(a, good.id);
    expect(ok).toMatchObject({ id: e2, status: 'succeeded', attempt_count: 1 });

    // a redelivered message of a delivery already done is acknowledged without another attempt
    const again = await handler({ Records: [record('m3', m2, 1)] });
    expect(again.batchItemFailures).toEqual([]);
    expect(okReceiver.received.length).toBe(1);
  });

  it('an unreadable message goes to the DLQ', async () => {
    sqs.reset();
    sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
    const out = await handler({ Records: [{ ...record('x', {}), body: 'not json' }] });
    expect(out.batchItemFailures).toEqual([]);
    expect(sqs.commandCalls(SendMessageCommand)[0]!.args[0].input).toEqual({ QueueUrl: DLQ, MessageBody: 'not json' });
    expect((await api('GET', '/health')).status).toBe(200);
  });
});

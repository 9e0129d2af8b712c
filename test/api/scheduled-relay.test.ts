import { randomUUID } from 'node:crypto';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { useRuntimeConfig } from '../helpers/in-process.js';

/**
 * functions/webhooks/relay.handler invoked as Lambda invokes it on its schedule: the export
 * called with an event and a context whose getRemainingTimeInMillis the test controls, with
 * the AWS queue adapter (SQS is mocked: no SQS engine here; the exact requests are checked).
 * It runs on a table of its own in the suite's DynamoDB Local, so the local runtime's own
 * relay (which polls the suite's table) cannot take its events first.
 */
const table = `relay-${randomUUID().slice(0, 8)}`;
const QUEUE = 'https://sqs.eu-west-1.amazonaws.com/111122223333/secrets-api-webhooks';
const DLQ = 'https://sqs.eu-west-1.amazonaws.com/111122223333/secrets-api-webhooks-dlq';
const sqs = mockClient(SQSClient);

type Lib = {
  handler: typeof import('../../functions/webhooks/relay.js').handler;
  db: ReturnType<typeof import('../../lib/store/client.js').db>;
  ddb: typeof import('@aws-sdk/lib-dynamodb');
  transact: typeof import('../../lib/store/tx.js').transact;
  eventPut: typeof import('../../lib/events/outbox.js').eventPut;
  keys: typeof import('../../lib/store/keys.js').keys;
};
let L: Lib;

beforeAll(async () => {
  useRuntimeConfig();
  Object.assign(process.env, { TABLE_NAME: table, QUEUE_PROVIDER: 'sqs', WEBHOOK_QUEUE_URL: QUEUE, WEBHOOK_DLQ_URL: DLQ });
  const { ensureTable } = await import('../../scripts/local/dynamodb.js');
  await ensureTable(inject('dynamoEndpoint'), table);
  const [relay, client, ddb, tx, outbox, keys] = await Promise.all([
    import('../../functions/webhooks/relay.js'),
    import('../../lib/store/client.js'),
    import('@aws-sdk/lib-dynamodb'),
    import('../../lib/store/tx.js'),
    import('../../lib/events/outbox.js'),
    import('../../lib/store/keys.js'),
  ]);
  L = { handler: relay.handler, db: client.db(), ddb, transact: tx.transact, eventPut: outbox.eventPut, keys: keys.keys };
});

afterAll(async () => {
  sqs.restore();
  const { DeleteTableCommand, DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
  await new DynamoDBClient({ endpoint: inject('dynamoEndpoint'), region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }).send(
    new DeleteTableCommand({ TableName: table }),
  );
});

async function webhook(tenantId: string, events: string[], enabled = true) {
  const id = randomUUID();
  const at = new Date().toISOString();
  await L.db.send(
    new L.ddb.PutCommand({
      TableName: table,
      Item: { ...L.keys.webhook(tenantId, id), id, url: 'https://hooks.example.com/in', events, description: '', enabled, created_at: at, created_by: null, updated_at: at, secret: new Uint8Array([1]) },
    }),
  );
  return id;
}

/** Outbox events as a change writes them (lib/events/outbox.ts). */
async function emit(tenantId: string, type: string, data: Record<string, unknown>) {
  const put = L.eventPut(tenantId, type as never, data);
  await L.transact([put]);
  return (put.Put!.Item as { id: string }).id;
}

async function outboxLeft(): Promise<number> {
  const out = await L.db.send(new L.ddb.QueryCommand({ TableName: table, IndexName: 'gsi1', KeyConditionExpression: 'gsi1pk = :p', ExpressionAttributeValues: { ':p': 'OUTBOX' } }));
  return out.Items?.length ?? 0;
}

const sent = () => sqs.commandCalls(SendMessageCommand).map((c) => ({ QueueUrl: c.args[0].input.QueueUrl, body: JSON.parse(c.args[0].input.MessageBody!) }));

describe('the outbox relay function (scheduled)', () => {
  it('one pass when the invocation has under 12 s left: each subscribed event to the queue, every event out of the outbox', async () => {
    sqs.reset();
    sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
    const withHooks = randomUUID();
    const without = randomUUID();
    const hook = await webhook(withHooks, ['secret.created']);
    await webhook(withHooks, ['secret.created'], false); // disabled: never a target
    const created = await emit(withHooks, 'secret.created', { name: 'db' });
    await emit(withHooks, 'secret.deleted', { name: 'db' }); // not subscribed
    await emit(without, 'secret.created', { name: 'x' }); // an account without webhooks

    const total = await L.handler({ source: 'aws.events', 'detail-type': 'Scheduled Event' }, { getRemainingTimeInMillis: () => 11_000 });

    expect(total).toEqual({ events: 3, messages: 1, sealed: 0 });
    expect(sent()).toEqual([
      {
        QueueUrl: QUEUE,
        body: {
          v: 1,
          tenant_id: withHooks,
          webhook_id: hook,
          event: { id: created, type: 'secret.created', timestamp: expect.any(String), tenant_id: withHooks, data: { name: 'db' } },
        },
      },
    ]);
    expect(await outboxLeft()).toBe(0);
    const delivery = await L.db.send(new L.ddb.GetCommand({ TableName: table, Key: L.keys.delivery(withHooks, hook, created), ConsistentRead: true }));
    expect(delivery.Item).toMatchObject({ status: 'queued', event_type: 'secret.created' });
  });

  it('polls every second while more than 12 s remain: an event emitted during the invocation leaves in it', async () => {
    sqs.reset();
    sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
    const tenantId = randomUUID();
    const hook = await webhook(tenantId, ['*']);
    await emit(tenantId, 'secret.created', { n: 1 });
    const deadline = Date.now() + 14_500;
    let late: string | undefined;
    const emitting = new Promise<void>((ok) =>
      setTimeout(() => {
        void emit(tenantId, 'secret.updated', { n: 2 }).then((id) => {
          late = id;
          ok();
        });
      }, 300),
    );
    const total = await L.handler({}, { getRemainingTimeInMillis: () => deadline - Date.now() });
    await emitting;
    expect(total).toMatchObject({ events: 2, messages: 2 });
    expect(sent().map((m) => [m.body.webhook_id, m.body.event.type, m.body.event.data])).toEqual([
      [hook, 'secret.created', { n: 1 }],
      [hook, 'secret.updated', { n: 2 }],
    ]);
    expect(sent()[1]!.body.event.id).toBe(late);
  });

  it('without a context (a manual invocation): one pass', async () => {
    sqs.reset();
    sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
    const tenantId = randomUUID();
    await webhook(tenantId, ['secret.created']);
    await emit(tenantId, 'secret.created', {});
    expect(await L.handler({})).toEqual({ events: 1, messages: 1, sealed: 0 });
    expect(await outboxLeft()).toBe(0);
  });

  it('a queue that refuses the message leaves the event in the outbox for the next pass', async () => {
    sqs.reset();
    sqs.on(SendMessageCommand).rejects(new Error('AccessDenied'));
    const tenantId = randomUUID();
    await webhook(tenantId, ['secret.created']);
    await emit(tenantId, 'secret.created', {});
    await expect(L.handler({}, { getRemainingTimeInMillis: () => 11_000 })).rejects.toThrow('AccessDenied');
    expect(await outboxLeft()).toBe(1);
  });
});

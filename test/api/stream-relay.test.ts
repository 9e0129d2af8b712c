import { randomUUID } from 'node:crypto';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { CallContext } from '../../lib/auth/principal.js';
import { useOwnConfig } from '../helpers/in-process.js';

/**
 * The outbox relay as AWS runs it: functions/webhooks/relay.handler fed by the table's stream
 * through the event-source mapping of lib/events/relay.ts (filters, batch settings, one
 * invocation per shard, ReportBatchItemFailures), run by the local stream poller on DynamoDB
 * Local's streams API (scripts/local/streams.ts, the poller both local runtimes use). It runs
 * on a table of its own in the suite's DynamoDB Local, with the AWS queue adapter (SQS is
 * mocked: no SQS engine here; the exact requests are checked).
 */
const table = `relay-${randomUUID().slice(0, 8)}`;
const QUEUE = 'https://sqs.eu-west-1.amazonaws.com/111122223333/secrets-api-webhooks';
const DLQ = 'https://sqs.eu-west-1.amazonaws.com/111122223333/secrets-api-webhooks-dlq';
const sqs = mockClient(SQSClient);

type Lib = {
  db: ReturnType<typeof import('../../lib/store/client.js').db>;
  ddb: typeof import('@aws-sdk/lib-dynamodb');
  commitWithIds: typeof import('../../lib/audit/audit.js').commitWithIds;
  keys: typeof import('../../lib/store/keys.js').keys;
};
let L: Lib;
let restoreConfig: (() => void) | undefined;
let poller: import('../../scripts/local/streams.js').StreamPoller;
/** Every invocation: its shard, the outbox event ids it carried, and the invocations in flight on that shard when it started. */
const invocations: { shard: string; sks: string[]; overlapping: number }[] = [];
/** Stream records that reached the function (after the mapping's filters). */
const delivered: string[] = [];

beforeAll(async () => {
  restoreConfig = useOwnConfig({ TABLE_NAME: table, QUEUE_PROVIDER: 'sqs', WEBHOOK_QUEUE_URL: QUEUE, WEBHOOK_DLQ_URL: DLQ });
  const { ensureTable } = await import('../../scripts/local/dynamodb.js');
  await ensureTable(inject('dynamoEndpoint'), table);
  const [relay, fn, streams, events, client, ddb, audit, keys] = await Promise.all([
    import('../../lib/events/relay.js'),
    import('../../functions/webhooks/relay.js'),
    import('../../scripts/local/streams.js'),
    import('../../scripts/local/events.js'),
    import('../../lib/store/client.js'),
    import('@aws-sdk/lib-dynamodb'),
    import('../../lib/audit/audit.js'),
    import('../../lib/store/keys.js'),
  ]);
  L = { db: client.db(), ddb, commitWithIds: audit.commitWithIds, keys: keys.keys };
  const inFlight = new Map<string, number>();
  poller = streams.startStreamPoller({
    endpoint: inject('dynamoEndpoint'),
    mapping: events.localRelayMapping(table, relay.OUTBOX_STREAM),
    invoke: async (event, { shardId }) => {
      const n = inFlight.get(shardId) ?? 0;
      inFlight.set(shardId, n + 1);
      const sks = event.Records.map((r) => (r.dynamodb as { Keys: { sk: { S: string } } }).Keys.sk.S);
      delivered.push(...sks);
      invocations.push({ shard: shardId, sks, overlapping: n });
      try {
        await new Promise((ok) => setTimeout(ok, 20)); // a slow relay: the next batch must wait for it
        return { ok: true, result: await fn.handler(event as never) };
      } catch (error) {
        return { ok: false, error: { errorType: (error as Error).name, errorMessage: (error as Error).message } };
      } finally {
        inFlight.set(shardId, (inFlight.get(shardId) ?? 1) - 1);
      }
    },
  });
});

afterAll(async () => {
  await poller?.stop();
  sqs.restore();
  restoreConfig?.();
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

const ctxOf = (tenantId: string) =>
  ({
    principal: { kind: 'api_key', tenantId, id: 'relay-test', user: null, scopes: ['admin:*'], operator: false },
    requestId: randomUUID(),
    sourceIp: '127.0.0.1',
    userAgent: 'relay-test',
  }) as unknown as CallContext;

/** A change as the services commit it (lib/audit/audit.ts): its audit entry and its outbox event in one transaction. */
async function emit(tenantId: string, type: string, data: Record<string, unknown>) {
  const ids = await L.commitWithIds(ctxOf(tenantId), tenantId, [], { action: type, resource: { type: 'secret', id: 'x' }, event: { type: type as never, data } });
  return ids.eventId!;
}

async function outboxOf(tenantId: string): Promise<number> {
  const out = await L.db.send(
    new L.ddb.QueryCommand({
      TableName: table,
      KeyConditionExpression: 'pk = :p AND begins_with(sk, :o)',
      ExpressionAttributeValues: { ':p': `T#${tenantId}`, ':o': 'OUTBOX#' },
      ConsistentRead: true,
    }),
  );
  return out.Items?.length ?? 0;
}

/** Waits (no timing assertion: the test's own timeout bounds it) until `done()` holds. */
async function until(done: () => Promise<boolean> | boolean): Promise<void> {
  while (!(await done())) await new Promise((ok) => setTimeout(ok, 100));
}

const sendsOf = (tenantId: string) =>
  sqs
    .commandCalls(SendMessageCommand)
    .map((c) => ({ QueueUrl: c.args[0].input.QueueUrl, body: JSON.parse(c.args[0].input.MessageBody!) }))
    .filter((m) => m.body.tenant_id === tenantId);

describe('the outbox relay function (the table stream)', () => {
  it('each subscribed event to the queue, every event out of the outbox, the audit entries sealed', async () => {
    sqs.reset();
    sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
    const withHooks = randomUUID();
    const without = randomUUID();
    const hook = await webhook(withHooks, ['secret.created']);
    await webhook(withHooks, ['secret.created'], false); // disabled: never a target
    const created = await emit(withHooks, 'secret.created', { name: 'db' });
    await emit(withHooks, 'secret.deleted', { name: 'db' }); // not subscribed
    await emit(without, 'secret.created', { name: 'x' }); // an account without webhooks

    await until(async () => (await outboxOf(withHooks)) === 0 && (await outboxOf(without)) === 0);
    expect(sendsOf(withHooks)).toEqual([
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
    expect(sendsOf(without)).toEqual([]);
    const delivery = await L.db.send(new L.ddb.GetCommand({ TableName: table, Key: L.keys.delivery(withHooks, hook, created), ConsistentRead: true }));
    expect(delivery.Item).toMatchObject({ status: 'queued', event_type: 'secret.created' });

    // the audit entries were sealed by the same stream: the chain head counts both of the account's entries
    await until(async () => Boolean((await L.db.send(new L.ddb.GetCommand({ TableName: table, Key: L.keys.auditChain(withHooks), ConsistentRead: true }))).Item));
    await until(
      async () => (await L.db.send(new L.ddb.GetCommand({ TableName: table, Key: L.keys.auditChain(withHooks), ConsistentRead: true }))).Item?.seq === 2,
    );
  });

  it('only outbox and audit inserts reach the function: other items and the outbox deletes are filtered out', async () => {
    const tenantId = randomUUID();
    await webhook(tenantId, ['*']); // a webhook item: not an outbox or audit item
    await emit(tenantId, 'secret.created', {});
    await until(async () => (await outboxOf(tenantId)) === 0);
    await new Promise((ok) => setTimeout(ok, 1_500)); // the delete's stream record has had time to arrive
    expect(delivered.every((sk) => sk.startsWith('OUTBOX#') || sk.startsWith('AUDIT#'))).toBe(true);
    expect(new Set(delivered).size).toBe(delivered.length); // each insert once: no delete, no redelivery
  });

  it('a record that fails is retried from itself; the events before and after it are sent once', async () => {
    sqs.reset();
    const failing = randomUUID();
    const fine = randomUUID();
    await webhook(failing, ['*']);
    await webhook(fine, ['*']);
    let refusals = 0;
    sqs.on(SendMessageCommand).callsFake((input: { MessageBody: string }) => {
      if (JSON.parse(input.MessageBody).tenant_id === failing && refusals++ === 0) throw new Error('ServiceUnavailable');
      return { MessageId: 'm' };
    });
    // one transaction per event, one after another: their records follow in this order
    const before = await emit(fine, 'secret.created', { n: 1 });
    const bad = await emit(failing, 'secret.created', { n: 2 });
    const after = await emit(fine, 'secret.created', { n: 3 });

    await until(async () => (await outboxOf(failing)) === 0 && (await outboxOf(fine)) === 0);
    expect(refusals).toBe(2); // refused once, accepted on the retry
    expect(sendsOf(fine).map((m) => m.body.event.id)).toEqual([before, after]);
    expect(sendsOf(failing).map((m) => m.body.event.id)).toEqual([bad, bad]);
  });

  it('no overlapping relays: one invocation at a time per stream shard, however fast events arrive', async () => {
    sqs.reset();
    sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
    const tenants = Array.from({ length: 12 }, () => randomUUID());
    await Promise.all(tenants.map((t) => webhook(t, ['*'])));
    const start = invocations.length;
    await Promise.all(tenants.flatMap((t) => [emit(t, 'secret.created', {}), emit(t, 'secret.updated', {})]));
    await until(async () => (await Promise.all(tenants.map(outboxOf))).every((n) => n === 0));
    const mine = invocations.slice(start);
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.map((i) => i.overlapping)).toEqual(mine.map(() => 0));
    // every event reached the queue exactly once
    for (const t of tenants) expect(sendsOf(t).map((m) => m.body.event.type).sort()).toEqual(['secret.created', 'secret.updated']);
  });
});

import { randomUUID } from 'node:crypto';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../lib/auth/principal.js';
import { routeByKey } from '../../lib/routes.js';
import { canary } from '../helpers/api.js';
import { intercept } from './dynamo-faults.js';
import { table } from './table.js';

/**
 * lib/audit/queue.ts and recordAudit's two paths (lib/audit/audit.ts), against the suite's
 * table with SQS mocked: the exact SendMessage of a read-only route (and nothing of the
 * principal or account in it), the direct put of a writing route, and the audit writer:
 * what it writes, what it refuses, and a redelivery. The path through the local SQS engine
 * end to end is test/api/audit-queue.test.ts.
 */
const QUEUE = 'https://sqs.us-east-1.amazonaws.com/111122223333/secrets-api-audit';
process.env.AUDIT_QUEUE_URL = QUEUE;

let t: Awaited<ReturnType<typeof table>>;
let L: {
  audit: typeof import('../../lib/audit/audit.js');
  queue: typeof import('../../lib/audit/queue.js');
  key: typeof import('../../lib/audit/queue-key.js');
  scope: typeof import('../../lib/tenancy/scope.js');
  keys: typeof import('../../lib/store/keys.js').keys;
};
const sqs = mockClient(SQSClient);
const undo: (() => void)[] = [];

beforeAll(async () => {
  t = await table();
  const [audit, queue, key, scope, { keys }] = await Promise.all([
    import('../../lib/audit/audit.js'),
    import('../../lib/audit/queue.js'),
    import('../../lib/audit/queue-key.js'),
    import('../../lib/tenancy/scope.js'),
    import('../../lib/store/keys.js'),
  ]);
  L = { audit, queue, key, scope, keys };
});
afterEach(() => {
  sqs.reset();
  while (undo.length > 0) undo.pop()!();
});
afterAll(() => sqs.restore());

const readOnly = routeByKey('POST', '/api/v1/export/json')!;
const writing = routeByKey('POST', '/api/v1/secrets')!;

/** A principal whose account carries a canary everywhere the entry must not look. */
function principal(tenantId: string, secret: string): Principal {
  return {
    kind: 'api_key',
    tenantId,
    tenant: { id: tenantId, name: secret, admin_email: `${secret}@unit.example`, status: 'active', operator: false, quota: {}, settings: { note: secret } } as never,
    id: 'key-1',
    user: 'reader@unit.example',
    scopes: ['export:read', secret],
    operator: false,
  };
}
const ctx = (tenantId: string, secret: string) => ({ principal: principal(tenantId, secret), requestId: 'req-1', sourceIp: '198.51.100.7', userAgent: 'unit' });
const change = { action: 'export.json', resource: { type: 'export', id: 'req-1' }, detail: { count: 2, types: { password: 2 }, encrypted: true } };

describe('recordAudit on a read-only route: one SendMessage to the audit queue, no table write', () => {
  it('derives audit:send for exactly the authenticated routes without table:write', () => {
    expect(readOnly.grants).toContain('audit:send');
    expect(writing.grants).not.toContain('audit:send');
    expect(routeByKey('GET', '/ready')!.grants).not.toContain('audit:send');
  });

  it('sends exactly {QueueUrl, MessageBody}: the entry (nothing of the account, scope or canary), its tenant\'s wrapped audit key and the MAC', async () => {
    const tenantId = randomUUID();
    const secret = canary('audit-queue');
    sqs.on(SendMessageCommand).resolves({ MessageId: 'm-1' });
    const writes: string[] = [];
    undo.push(
      intercept(t.db(), (command) => {
        if (command !== 'GetItemCommand' && command !== 'QueryCommand') writes.push(command);
        return undefined;
      }),
    );
    const id = await L.audit.auditRouteScope(readOnly, () => L.audit.recordAudit(ctx(tenantId, secret), tenantId, change));
    const calls = sqs.commandCalls(SendMessageCommand).map((c) => c.args[0].input);
    expect(calls).toHaveLength(1);
    expect(Object.keys(calls[0]!).sort()).toEqual(['MessageBody', 'QueueUrl']);
    expect(calls[0]!.QueueUrl).toBe(QUEUE);
    const body = JSON.parse(calls[0]!.MessageBody!);
    expect(body).toEqual({ v: 2, entry: expect.any(String), key: expect.stringMatching(/^[A-Za-z0-9+/]+=*$/), mac: expect.stringMatching(/^[\w-]{43}$/) });
    // the MAC is HMAC-SHA256 under the tenant's audit data key, opened with the tenant's context
    const macKey = await L.key.writerAuditKey(tenantId, body.key);
    expect(body.mac).toBe(L.key.auditMac(macKey, body.entry));
    expect(JSON.parse(body.entry)).toEqual({
        id,
        at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
        tenant_id: tenantId,
        actor: { type: 'api_key', id: 'key-1', user: 'reader@unit.example', tenant_id: tenantId },
        action: 'export.json',
        resource: { type: 'export', id: 'req-1' },
        outcome: 'success',
        request_id: 'req-1',
        source_ip: '198.51.100.7',
        user_agent: 'unit',
        detail: { count: 2, types: { password: 2 }, encrypted: true },
    });
    expect(calls[0]!.MessageBody).not.toContain(secret);
    expect(calls[0]!.MessageBody).not.toContain('export:read');
    // nothing written by the route itself: the writer does it
    expect(writes).toEqual([]);
    expect(await t.get(L.keys.audit(tenantId, id))).toBeUndefined();
  });

  it('a send that fails fails the call: the route does not answer unaudited', async () => {
    sqs.on(SendMessageCommand).rejects(new Error('sqs down'));
    const tenantId = randomUUID();
    await expect(L.audit.auditRouteScope(readOnly, () => L.audit.recordAudit(ctx(tenantId, 'x'), tenantId, change))).rejects.toThrow('sqs down');
  });

  it('a writing route, and a caller outside any route (a worker), put the entry themselves, conditional, and send nothing', async () => {
    const tenantId = randomUUID();
    const viaRoute = await L.audit.auditRouteScope(writing, () => L.audit.recordAudit(ctx(tenantId, 'x'), tenantId, change));
    const viaWorker = await L.audit.recordAudit(ctx(tenantId, 'x'), tenantId, { ...change, outcome: 'failure' });
    expect(sqs.commandCalls(SendMessageCommand)).toHaveLength(0);
    for (const [id, outcome] of [[viaRoute, 'success'], [viaWorker, 'failure']] as const) {
      expect(await t.get(L.keys.audit(tenantId, id))).toMatchObject({ ...L.keys.audit(tenantId, id), id, action: 'export.json', outcome });
    }
  });
});

describe('the audit writer (writeAuditMessages)', () => {
  /** The message recordAudit sends for an entry of `tenantId`, captured from the mock. */
  async function sent(tenantId: string, extra: Partial<import('../../lib/audit/audit.js').Change> = {}): Promise<{ id: string; body: string }> {
    sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
    const id = await L.audit.auditRouteScope(readOnly, () => L.audit.recordAudit(ctx(tenantId, 'x'), tenantId, { ...change, ...extra }));
    const body = sqs.commandCalls(SendMessageCommand).at(-1)!.args[0].input.MessageBody!;
    return { id, body };
  }

  it('writes the entry as the very item the direct path writes, in the entry\'s tenant scope; a redelivery is a no-op', async () => {
    const tenantId = randomUUID();
    const { id, body } = await sent(tenantId);
    const scopes: (string | undefined)[] = [];
    const probe = L.scope.withTenant(tenantId, () => t.db());
    undo.push(
      intercept(probe, (command) => {
        if (command === 'PutItemCommand') scopes.push(L.scope.currentScope()?.tenantId);
        return undefined;
      }),
    );
    const first = await L.queue.writeAuditMessages([{ messageId: 'a', body }]);
    expect(first).toEqual({ batchItemFailures: [], outcomes: ['written'] });
    expect(scopes).toEqual([tenantId]); // the tenant's client, inside its scope
    const item = await t.get(L.keys.audit(tenantId, id));
    const direct = L.audit.auditPut(ctx(tenantId, 'x'), tenantId, change).item.Put!.Item!;
    expect(Object.keys(item!).sort()).toEqual(Object.keys(direct).sort());
    expect(item).toMatchObject({ ...L.keys.audit(tenantId, id), ...JSON.parse(JSON.parse(body).entry) });
    // delivered again (SQS is at least once): nothing changes, nothing fails
    const again = await L.queue.writeAuditMessages([{ messageId: 'a', body }]);
    expect(again).toEqual({ batchItemFailures: [], outcomes: ['duplicate'] });
    expect(await t.get(L.keys.audit(tenantId, id))).toEqual(item);
  });

  /** A v2 message of `entry` (any JSON), MAC'd under the audit key of `keyTenant` (a session of that tenant). */
  async function signed(keyTenant: string, entry: unknown, v = 2): Promise<string> {
    const json = JSON.stringify(entry);
    const { key, wrapped } = await L.scope.withTenant(keyTenant, () => L.key.senderAuditKey(keyTenant));
    return JSON.stringify({ v, entry: json, key: wrapped, mac: L.key.auditMac(key, json) });
  }

  const partition = async (tenantId: string) =>
    (
      await t.db().send(
        new (await import('@aws-sdk/lib-dynamodb')).QueryCommand({
          TableName: t.tableName(),
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': `T#${tenantId}` },
          ConsistentRead: true,
        }),
      )
    ).Items!;

  it('refuses what is not an audit entry, even with a valid MAC: reported as a batch item failure, nothing written', async () => {
    const tenantId = randomUUID();
    const { id, body } = await sent(tenantId, { outcome: 'denied' });
    const good = JSON.parse(body) as { v: number; entry: string; key: string; mac: string };
    const entry = JSON.parse(good.entry) as Record<string, any>;
    const variants: Record<string, string> = {
      'not JSON': '{',
      'no version': JSON.stringify({ entry: good.entry, key: good.key, mac: good.mac }),
      'another version': JSON.stringify({ ...good, v: 3 }),
      'an extra top-level field': JSON.stringify({ ...good, item: { pk: 'T#x', sk: 'SECRET#y' } }),
      'no MAC': JSON.stringify({ ...good, mac: undefined }),
      'no key': JSON.stringify({ ...good, key: undefined }),
      'an entry that is not JSON': await signed(tenantId, '{'),
      'an extra entry field (a key of the table)': await signed(tenantId, { ...entry, pk: `T#${tenantId}` }),
      'an extra entry field (a value)': await signed(tenantId, { ...entry, value: 'hunter2' }),
      'a missing field': await signed(tenantId, { ...entry, action: undefined }),
      'an id that is no entry id': await signed(tenantId, { ...entry, id: 'SECRET#x' }),
      'a tenant that forms another key': await signed(`${tenantId}#x`, { ...entry, tenant_id: `${tenantId}#x` }),
      'an unknown outcome': await signed(tenantId, { ...entry, outcome: 'maybe' }),
      'an unknown actor type': await signed(tenantId, { ...entry, actor: { ...entry.actor, type: 'root' } }),
      'an array': JSON.stringify([good]),
    };
    const records = Object.entries(variants).map(([name, b]) => ({ messageId: name, body: b }));
    const out = await L.queue.writeAuditMessages([...records, { messageId: 'good', body }]);
    expect(out.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(Object.keys(variants).sort());
    expect(out.outcomes.at(-1)).toBe('written');
    expect((await partition(tenantId)).map((i) => i.sk)).toEqual([`AUDIT#${id}`]);
  });

  describe('the MAC: no sender can write into a tenant other than its session\'s', () => {
    it('a v1 message (unauthenticated, the format before issue 31) is refused, even a well-formed one', async () => {
      const tenantId = randomUUID();
      const { body } = await sent(tenantId);
      const v1 = JSON.stringify({ v: 1, entry: JSON.parse(JSON.parse(body).entry) });
      const out = await L.queue.writeAuditMessages([{ messageId: 'v1', body: v1 }]);
      expect(out).toEqual({ batchItemFailures: [{ itemIdentifier: 'v1' }], outcomes: ['refused'] });
      expect(await partition(tenantId)).toEqual([]);
    });

    it('a tampered entry (its action, its outcome, its tenant) fails the MAC', async () => {
      const tenantId = randomUUID();
      const { body } = await sent(tenantId);
      const good = JSON.parse(body) as { entry: string };
      const entry = JSON.parse(good.entry);
      const tampered = [
        { ...entry, action: 'secret.delete' },
        { ...entry, outcome: 'success', detail: {} },
        // a tenant that is not the key's: refused by the key already (see below) or the MAC
        { ...entry, tenant_id: tenantId, actor: { ...entry.actor, id: 'someone-else' } },
      ].map((e, i) => ({ messageId: `t${i}`, body: JSON.stringify({ ...good, entry: JSON.stringify(e) }) }));
      const out = await L.queue.writeAuditMessages(tampered);
      expect(out.outcomes).toEqual(['refused', 'refused', 'refused']);
      expect(await partition(tenantId)).toEqual([]);
    });

    it('a forged tenant: an entry of B, MAC\'d under the audit key a session of A obtained, is refused (the key does not open under B\'s context)', async () => {
      const [a, b] = [randomUUID(), randomUUID()];
      const { body } = await sent(b);
      const entryOfB = JSON.parse(JSON.parse(body).entry);
      const forged = await signed(a, entryOfB);
      const out = await L.queue.writeAuditMessages([{ messageId: 'forged', body: forged }]);
      expect(out).toEqual({ batchItemFailures: [{ itemIdentifier: 'forged' }], outcomes: ['refused'] });
      expect(await partition(b)).toEqual([]);
      expect(await partition(a)).toEqual([]);
    });

    it('a replayed key of another tenant: A\'s key, already opened and cached by the writer for A, vouches for nothing of B', async () => {
      const [a, b] = [randomUUID(), randomUUID()];
      const ofA = await sent(a);
      expect((await L.queue.writeAuditMessages([{ messageId: 'a', body: ofA.body }])).outcomes).toEqual(['written']);
      // A's message as sent, the entry rewritten to B and re-MAC'd with A's key (the plaintext A's session holds)
      const { key, wrapped } = await L.scope.withTenant(a, () => L.key.senderAuditKey(a));
      expect(wrapped).toBe(JSON.parse(ofA.body).key);
      const entryOfB = { ...JSON.parse(JSON.parse(ofA.body).entry), id: randomUUID(), tenant_id: b, actor: { type: 'api_key', id: 'key-1', user: null, tenant_id: b } };
      const json = JSON.stringify(entryOfB);
      const replay = JSON.stringify({ v: 2, entry: json, key: wrapped, mac: L.key.auditMac(key, json) });
      const out = await L.queue.writeAuditMessages([{ messageId: 'replay', body: replay }]);
      expect(out).toEqual({ batchItemFailures: [{ itemIdentifier: 'replay' }], outcomes: ['refused'] });
      expect(await partition(b)).toEqual([]);
    });

    it('a session of A cannot obtain B\'s audit key, so a read-only route of A sends nothing of B', async () => {
      const [a, b] = [randomUUID(), randomUUID()];
      sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
      await expect(L.scope.withTenant(a, () => L.key.senderAuditKey(b))).rejects.toThrow(L.scope.TenantScopeViolation);
      await expect(
        L.scope.withTenant(a, () => L.audit.auditRouteScope(readOnly, () => L.audit.recordAudit(ctx(b, 'x'), b, change))),
      ).rejects.toThrow(L.scope.TenantScopeViolation);
      expect(sqs.commandCalls(SendMessageCommand)).toHaveLength(0);
    });

    it('costs one key per tenant and container: 20 messages of one tenant, one GenerateDataKey by the sender and one Decrypt by the writer', async () => {
      L.key.resetAuditKeys();
      const tenantId = randomUUID();
      const bodies: string[] = [];
      for (let i = 0; i < 20; i++) bodies.push((await sent(tenantId)).body);
      expect(new Set(bodies.map((b) => JSON.parse(b).key)).size).toBe(1);
      const out = await L.queue.writeAuditMessages(bodies.map((body, i) => ({ messageId: `m${i}`, body })));
      expect(out.outcomes).toEqual(Array(20).fill('written'));
      expect(L.key.auditKeyCalls()).toEqual({ generated: 1, opened: 1 });
    });
  });

  it('a write that fails is reported for redelivery; the other messages of the batch are written', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    const ma = await sent(a);
    const mb = await sent(b);
    const client = L.scope.withTenant(a, () => t.db());
    undo.push(
      intercept(client, (command) => {
        if (command === 'PutItemCommand') throw new Error('throttled');
        return undefined;
      }),
    );
    const out = await L.queue.writeAuditMessages([
      { messageId: 'a', body: ma.body },
      { messageId: 'b', body: mb.body },
    ]);
    expect(out).toEqual({ batchItemFailures: [{ itemIdentifier: 'a' }], outcomes: ['failed', 'written'] });
    expect(await t.get(L.keys.audit(a, ma.id))).toBeUndefined();
    expect(await t.get(L.keys.audit(b, mb.id))).toBeDefined();
  });
});

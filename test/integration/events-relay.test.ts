import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEntryItem, table } from './table.js';
import { relayRecords, type StreamRecord } from '../../lib/events/relay.js';
import { memoryQueue } from '../../lib/events/memory-queue.js';
import { setQueue } from '../../lib/events/queue.js';
import { keys } from '../../lib/store/keys.js';
import { idPrefixAt, idTime, LOOKBACK_MS } from '../../lib/audit/chain.js';
import { newId } from '../../lib/ids.js';

/**
 * lib/events/relay.ts on stream records as the table's stream delivers them, against the
 * suite's table: the records it skips, an event already relayed by an earlier attempt, and a
 * seal that fails (reported, so the stream retries it). The stream path end to end is
 * test/api/stream-relay.test.ts.
 */
let t: Awaited<ReturnType<typeof table>>;
const q = memoryQueue();

beforeAll(async () => {
  t = await table();
  setQueue(q);
});
afterAll(() => setQueue(undefined));

const record = (eventName: string, pk: string, sk: string, seq: string): StreamRecord => ({
  eventName,
  dynamodb: { Keys: { pk: { S: pk }, sk: { S: sk } }, SequenceNumber: seq },
});

async function webhook(tenantId: string) {
  const id = randomUUID();
  const at = new Date().toISOString();
  await t.put({ ...keys.webhook(tenantId, id), id, url: 'https://hooks.example.com/in', events: ['*'], description: '', enabled: true, created_at: at, created_by: null, updated_at: at, secret: new Uint8Array([1]) });
}

describe('relayRecords', () => {
  it('skips what is not an outbox or audit insert; an event of an account without webhooks is only deleted', async () => {
    const tid = randomUUID();
    const out = await relayRecords([
      record('REMOVE', `T#${tid}`, `OUTBOX#${randomUUID()}`, '1'),
      record('INSERT', `T#${tid}`, `WEBHOOK#${randomUUID()}`, '2'),
      record('INSERT', `T#${tid}`, `OUTBOX#${randomUUID()}`, '3'),
      {},
    ]);
    expect(out).toEqual({ batchItemFailures: [], events: 1, messages: 0, sealed: 0 });
  });

  it('an event whose item is gone was relayed by an earlier attempt: nothing is sent again', async () => {
    const tid = randomUUID();
    await webhook(tid);
    const before = q.size();
    const out = await relayRecords([record('INSERT', `T#${tid}`, `OUTBOX#${randomUUID()}`, '7')]);
    expect(out).toEqual({ batchItemFailures: [], events: 1, messages: 0, sealed: 0 });
    expect(q.size()).toBe(before);
  });

  it('a seal that fails is reported at the account\'s first audit record; the records before it are done', async () => {
    const broken = randomUUID();
    const fine = randomUUID();
    // a chain head that does not parse: sealTenant throws for this account
    await t.put({ ...keys.auditChain(broken), seq: 'not a number' });
    const out = await relayRecords([
      record('INSERT', `T#${fine}`, `OUTBOX#${randomUUID()}`, '10'),
      record('INSERT', `T#${broken}`, `AUDIT#${randomUUID()}`, '11'),
      record('INSERT', `T#${broken}`, `AUDIT#${randomUUID()}`, '12'),
    ]);
    expect(out.batchItemFailures).toEqual([{ itemIdentifier: '11' }]);
    expect(out.events).toBe(1);
    await t.remove(keys.auditChain(broken));
  });

  it('an audit entry inserted later than the sealer\'s lookback (the audit writer after a redelivery) is sealed when its insert arrives', async () => {
    const tid = randomUUID();
    const entry = (id: string) => auditEntryItem(tid, id, new Date(idTime(id)).toISOString());
    const recent = newId();
    await t.put(entry(recent));
    expect(await relayRecords([record('INSERT', `T#${tid}`, `AUDIT#${recent}`, '20')])).toMatchObject({ batchItemFailures: [], sealed: 1 });
    // an entry made two lookbacks before the chain's newest one, written only now
    const late = `${idPrefixAt(idTime(recent) - 2 * LOOKBACK_MS)}-7000-8000-000000000001`;
    await t.put(entry(late));
    expect(await relayRecords([record('INSERT', `T#${tid}`, `AUDIT#${late}`, '21')])).toMatchObject({ batchItemFailures: [], sealed: 1 });
    expect((await t.get(keys.audit(tid, late)))?.chain).toMatchObject({ seq: 2 });
    // sealing lists each entry in the platform's AUDIT listing, keyed from its own sort key
    // (a tenant session may not name the listing's attributes: infra/grants.ts TenantWrite)
    for (const id of [recent, late]) expect(await t.get(keys.audit(tid, id))).toMatchObject(keys.auditIndex(id));
  });

  it('lists a lease for the sweeper from its own keys and status, and unlists it once it is revoked', async () => {
    const tid = randomUUID();
    const id = randomUUID();
    const expires = new Date(Date.now() + 3_600_000).toISOString();
    const lease = { ...keys.lease(tid, id), id, tenant_id: tid, status: 'active', expires_at: expires };
    await t.put(lease);
    expect((await relayRecords([record('INSERT', lease.pk, lease.sk, '30')])).batchItemFailures).toEqual([]);
    expect(await t.get(keys.lease(tid, id))).toMatchObject(keys.leaseExpiryIndex(tid, id, expires));
    // the relay's own update comes back as a MODIFY: nothing to write
    expect((await relayRecords([record('MODIFY', lease.pk, lease.sk, '31')])).batchItemFailures).toEqual([]);
    // a failed issuance is due at once
    await t.put({ ...(await t.get(keys.lease(tid, id))), status: 'failed' });
    await relayRecords([record('MODIFY', lease.pk, lease.sk, '32')]);
    expect(String((await t.get(keys.lease(tid, id)))?.platsk) < expires).toBe(true);
    await t.put({ ...(await t.get(keys.lease(tid, id))), status: 'revoked' });
    await relayRecords([record('MODIFY', lease.pk, lease.sk, '33')]);
    const revoked = await t.get(keys.lease(tid, id));
    expect(revoked?.platpk).toBeUndefined();
    expect(revoked?.platsk).toBeUndefined();
    // an item that is not a lease is never listed, whatever it holds
    const other = { pk: `T#${tid}`, sk: `SECRET#${id}`, status: 'active', expires_at: '2000-01-01T00:00:00.000Z' };
    await t.put(other);
    await relayRecords([record('INSERT', other.pk, other.sk, '34')]);
    expect((await t.get({ pk: other.pk, sk: other.sk }))?.platpk).toBeUndefined();
  });
});

import { randomBytes, randomUUID } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { admitted, guardWrites, NotAdmittedYet, RunAbandoned, speculate } from '../../lib/core/admission.js';
import { speculativePrincipal } from '../../lib/http/speculative-principal.js';
import type { Tenant } from '../../lib/store/tenants.js';
import { intercept } from './dynamo-faults.js';
import { table } from './table.js';

/**
 * lib/core/admission.ts against the suite's table: a speculative run's reads go out at once,
 * its writes wait for admission and never land when admission fails or the run is abandoned.
 */
let t: Awaited<ReturnType<typeof table>>;
beforeAll(async () => {
  t = await table();
  guardWrites(t.db());
  guardWrites(t.db()); // once per client
});

const key = () => ({ pk: `ADMISSION#${randomBytes(6).toString('hex')}`, sk: 'X' });
const put = (k: { pk: string; sk: string }) => t.db().send(new PutCommand({ TableName: t.tableName(), Item: { ...k, v: 1 } }));
const get = (k: { pk: string; sk: string }) => t.db().send(new GetCommand({ TableName: t.tableName(), Key: k, ConsistentRead: true }));
const deferred = () => {
  let resolve!: () => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<void>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  return { promise, resolve, reject };
};
const tick = () => new Promise((r) => setTimeout(r, 50));

describe('writes of a speculative run', () => {
  it('outside a run nothing waits', async () => {
    await expect(admitted()).resolves.toBeUndefined();
    const k = key();
    await put(k);
    expect(await t.get(k)).toMatchObject({ v: 1 });
  });

  it('reads go out at once; a write waits for admission, then lands', async () => {
    const gate = deferred();
    const k = key();
    const calls: string[] = [];
    const undo = intercept(t.db(), (command, input) => {
      if (input.Key?.pk === k.pk || input.Item?.pk === k.pk) calls.push(command);
      return undefined;
    });
    try {
      const run = speculate(gate.promise, async () => {
        await get(k);
        await put(k);
        return 'done';
      });
      await tick();
      // the read was sent; the write is held before the rest of the client's middleware
      expect(calls).toEqual(['GetItemCommand']);
      expect(await t.get(k)).toBeUndefined(); // (a read of this test's own: one more GetItem)
      gate.resolve();
      expect(await run).toEqual({ outcome: { value: 'done' }, missed: false });
      expect(calls).toEqual(['GetItemCommand', 'GetItemCommand', 'PutItemCommand']);
      expect(await t.get(k)).toMatchObject({ v: 1 });
    } finally {
      undo();
    }
  });

  it('a failed admission: the write is never issued and the run ends with the admission error', async () => {
    const gate = deferred();
    const k = key();
    const run = speculate(gate.promise, async () => {
      await put(k);
    });
    await tick();
    const refused = new Error('429');
    gate.reject(refused);
    expect(await run).toEqual({ outcome: { error: refused }, missed: false });
    expect(await t.get(k)).toBeUndefined();
  });
});

describe('the principal of a speculative run', () => {
  const facts = (scopes: string[] = ['secrets:read']) => ({
    kind: 'api_key' as const,
    tenantId: randomUUID(),
    id: 'k1',
    user: 'u@example.test',
    scopes,
  });
  const tenant = () => ({ id: 't', status: 'active', operator: true, quota: {} }) as unknown as Tenant;

  it('has the credential facts at once; operator is false without the admin scope, whatever the account', async () => {
    const read = deferred();
    const p = speculativePrincipal(facts(), read.promise as never, 'admin');
    expect(p).toMatchObject({ kind: 'api_key', id: 'k1', user: 'u@example.test', scopes: ['secrets:read'] });
    expect(p.operator).toBe(false);
  });

  it('reading the account before it was read abandons the run: missed, and its pending writes never land', async () => {
    const gate = deferred();
    const k = key();
    const p = speculativePrincipal(facts(['admin']), new Promise(() => undefined), 'admin');
    let pending: Promise<unknown> | undefined;
    const run = speculate(gate.promise, async () => {
      pending = put(k).catch((e: unknown) => e);
      return p.operator;
    });
    const out = await run;
    expect(out.missed).toBe(true);
    expect('error' in out.outcome && out.outcome.error).toBeInstanceOf(NotAdmittedYet);
    gate.resolve();
    expect(await pending).toBeInstanceOf(RunAbandoned);
    expect(await t.get(k)).toBeUndefined();
    expect(() => p.tenant).toThrow(NotAdmittedYet); // outside a run too
  });

  it('a missed read the handler swallowed is still seen', async () => {
    const p = speculativePrincipal(facts(), new Promise(() => undefined), 'admin');
    const out = await speculate(Promise.resolve(), async () => {
      try {
        return p.tenant.id;
      } catch {
        return 'swallowed';
      }
    });
    expect(out).toEqual({ outcome: { value: 'swallowed' }, missed: true });
  });

  it('once the account was read: its tenant and operator flag; a suspended or missing account stays unread', async () => {
    const active = speculativePrincipal(facts(['admin']), Promise.resolve(tenant()), 'admin');
    await tick();
    expect(active.tenant).toMatchObject({ id: 't' });
    expect(active.operator).toBe(true);
    const suspended = speculativePrincipal(facts(), Promise.resolve({ ...tenant(), status: 'suspended' } as Tenant), 'admin');
    const missing = speculativePrincipal(facts(), Promise.resolve(undefined), 'admin');
    const failed = speculativePrincipal(facts(), Promise.reject(new Error('read failed')), 'admin');
    await tick();
    for (const p of [suspended, missing, failed]) expect(() => p.tenant).toThrow(NotAdmittedYet);
  });
});

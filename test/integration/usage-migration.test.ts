import { randomUUID } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { keys, meterPk, tenantPk } from '../../lib/store/keys.js';
import { moveUsageToMeter } from '../../lib/store/usage.js';
import { intercept } from './dynamo-faults.js';
import { table } from './table.js';

/**
 * lib/store/usage.ts `moveUsageToMeter`: the migration of a table written before the metering
 * partition (docs/capacity.md, "Existing tables"), on items written with the old keys
 * (`T#<tid>/USAGE#...`).
 */
let t: Awaited<ReturnType<typeof table>>;
const undo: (() => void)[] = [];
beforeAll(async () => {
  t = await table();
});
afterEach(() => {
  while (undo.length > 0) undo.pop()!();
});

async function oldAccount() {
  const tid = randomUUID();
  await t.put({ ...keys.tenant(tid), ...keys.tenantIndex(tid, new Date().toISOString()), id: tid });
  return tid;
}
const old = (tid: string, sk: string) => ({ pk: tenantPk(tid), sk });
const moved = (tid: string, sk: string) => ({ pk: meterPk(tid), sk });

describe('moveUsageToMeter', () => {
  it('moves every usage item of every account to its metering partition, adding to what the new release counted there; a second run changes nothing', async () => {
    const tid = await oldAccount();
    await t.put({ ...old(tid, 'USAGE#2026-01-01'), requests: 5, ttl: 1_900_000_000, rl_ts: 1, rl_tok: 3, rl_cap: 100 });
    await t.put({ ...old(tid, 'USAGE#2026-01-02#3'), requests: 2, ttl: 1_900_000_100 });
    await t.put({ ...old(tid, 'USAGE#2026-01-03'), 'rl_api_key:k_ts': 1 }); // a credential bucket only: nothing counted
    await t.put({ ...old(tid, 'SECRET#untouched'), name: 'untouched' });
    // the new release counted the same day already
    await t.put({ ...moved(tid, 'USAGE#2026-01-01'), requests: 1, ttl: 1_900_000_050, rl_ts: 9 });

    const first = await moveUsageToMeter();
    expect(first.items).toBeGreaterThanOrEqual(3);
    expect(first.requests).toBeGreaterThanOrEqual(7);
    expect(await t.get(moved(tid, 'USAGE#2026-01-01'))).toEqual({ ...moved(tid, 'USAGE#2026-01-01'), requests: 6, ttl: 1_900_000_050, rl_ts: 9 });
    expect(await t.get(moved(tid, 'USAGE#2026-01-02#3'))).toEqual({ ...moved(tid, 'USAGE#2026-01-02#3'), requests: 2, ttl: 1_900_000_100 });
    expect(await t.get(moved(tid, 'USAGE#2026-01-03'))).toEqual({ ...moved(tid, 'USAGE#2026-01-03'), requests: 0 });
    for (const sk of ['USAGE#2026-01-01', 'USAGE#2026-01-02#3', 'USAGE#2026-01-03']) expect(await t.get(old(tid, sk)), sk).toBeUndefined();
    expect(await t.get(old(tid, 'SECRET#untouched'))).toMatchObject({ name: 'untouched' });

    await moveUsageToMeter();
    expect((await t.get(moved(tid, 'USAGE#2026-01-01')))!.requests).toBe(6);
    expect((await t.get(moved(tid, 'USAGE#2026-01-02#3')))!.requests).toBe(2);
  });

  it('a count landing on the old item during its move is carried too (the move is conditional on the count it read)', async () => {
    const tid = await oldAccount();
    await t.put({ ...old(tid, 'USAGE#2026-02-01'), requests: 4 });
    let raced = false;
    undo.push(
      intercept(t.db(), async (command, input) => {
        const touches = JSON.stringify(input).includes(tenantPk(tid));
        if (command === 'TransactWriteItemsCommand' && touches && !raced) {
          raced = true;
          // an earlier release's container counts a request between the read and the move
          await t.db().send(
            new UpdateCommand({
              TableName: t.tableName(),
              Key: old(tid, 'USAGE#2026-02-01'),
              UpdateExpression: 'ADD requests :one',
              ExpressionAttributeValues: { ':one': 1 },
            }),
          );
        }
        return undefined;
      }),
    );
    await moveUsageToMeter();
    expect(raced).toBe(true);
    expect((await t.get(moved(tid, 'USAGE#2026-02-01')))!.requests).toBe(5);
    expect(await t.get(old(tid, 'USAGE#2026-02-01'))).toBeUndefined();
  });
});

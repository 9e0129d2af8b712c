import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { GSI_SHARDS, keys, shardOf } from '../../lib/store/keys.js';
import { mergeShards, moveToShards } from '../../lib/store/shards.js';
import { table } from './table.js';

/**
 * The sharded platform listings (index plat) (lib/store/keys.ts, lib/store/shards.ts): items spread over
 * partition keys by a hash of their id, read back merged in sort-key order, with a cursor.
 */
let t: Awaited<ReturnType<typeof table>>;
beforeAll(async () => {
  t = await table();
});

async function collect(it: AsyncIterable<Record<string, unknown>>, max = Number.POSITIVE_INFINITY) {
  const out: string[] = [];
  for await (const item of it) {
    out.push(item.platsk as string);
    if (out.length >= max) break;
  }
  return out;
}

describe('shard keys', () => {
  it('a stable FNV-1a hash of the id, modulo 32, spread evenly', () => {
    expect(GSI_SHARDS).toBe(32);
    // fixed values: a writer and a reader in other processes or releases must agree
    expect(shardOf('')).toBe(0x811c9dc5 % 32);
    expect(shardOf('a')).toBe(0xe40c292c % 32);
    const counts = new Array<number>(GSI_SHARDS).fill(0);
    for (let i = 0; i < 32_000; i++) counts[shardOf(`${i}-${randomBytes(4).toString('hex')}`)]!++;
    expect(Math.min(...counts)).toBeGreaterThan(800);
    expect(Math.max(...counts)).toBeLessThan(1200);
  });

  it('AUDIT, TENANTS and LEASES name their shard; the readers get every shard', () => {
    expect(keys.auditIndex('01abc')).toEqual({ platpk: `AUDIT#${shardOf('01abc')}`, platsk: '01abc' });
    expect(keys.tenantIndex('t1', '2026-01-01T00:00:00Z')).toEqual({ platpk: `TENANTS#${shardOf('t1')}`, platsk: '2026-01-01T00:00:00Z#t1' });
    expect(keys.leaseExpiryIndex('t1', 'l1', '2026-01-01T00:00:00Z')).toEqual({
      platpk: `LEASES#${shardOf('l1')}`,
      platsk: '2026-01-01T00:00:00Z#t1#l1',
    });
    for (const [pks, name] of [
      [keys.auditIndexPks, 'AUDIT'],
      [keys.tenantIndexPks, 'TENANTS'],
      [keys.leaseExpiryPks, 'LEASES'],
    ] as const) {
      expect(pks).toHaveLength(32);
      expect(new Set(pks)).toEqual(new Set(Array.from({ length: 32 }, (_, n) => `${name}#${n}`)));
    }
    // the account's metering partition, apart from its data (infra/grants.ts TenantMeter)
    expect(keys.usageDay('t1', '2026-01-01')).toEqual({ pk: 'METER#t1', sk: 'USAGE#2026-01-01' });
    expect(keys.usageDay('t1', '2026-01-01', 7)).toEqual({ pk: 'METER#t1', sk: 'USAGE#2026-01-01#7' });
  });
});

describe('mergeShards', () => {
  const base = `SHARDTEST#${randomBytes(4).toString('hex')}`;
  const pks = [0, 1, 2].map((n) => `${base}#${n}`);
  const sks: string[] = [];
  beforeAll(async () => {
    // 30 items over 3 shards, their sort keys interleaved across shards; one shard empty-ish
    for (let i = 0; i < 30; i++) {
      const sk = `k${String(i).padStart(3, '0')}`;
      sks.push(sk);
      const shard = i % 7 === 0 ? 2 : i % 2;
      await t.put({ pk: `${base}-item-${i}`, sk: 'X', platpk: pks[shard], platsk: sk });
    }
  });

  it('ascending and descending, across pages of every shard', async () => {
    expect(await collect(mergeShards(pks, {}, { pageSize: 4 }))).toEqual(sks);
    expect(await collect(mergeShards(pks, { newestFirst: true }, { pageSize: 3 }))).toEqual([...sks].reverse());
  });

  it('a cursor resumes every shard past it, with no condition or with a range', async () => {
    expect(await collect(mergeShards(pks, {}, { after: 'k009' }))).toEqual(sks.slice(10));
    expect(await collect(mergeShards(pks, { sk: { between: ['k005', 'k020'] }, newestFirst: true }, { after: 'k012' }))).toEqual(
      sks.slice(5, 12).reverse(),
    );
    expect(await collect(mergeShards(pks, { sk: { between: ['k005', 'k020'] } }, { after: 'k012' }))).toEqual(sks.slice(13, 21));
  });

  it('other conditions without a cursor; a cursor with one is refused', async () => {
    expect(await collect(mergeShards(pks, { sk: { before: 'k003' } }))).toEqual(sks.slice(0, 3));
    expect(await collect(mergeShards(pks, { sk: { after: 'k026' } }))).toEqual(sks.slice(27));
    await expect(collect(mergeShards(pks, { sk: { after: 'k001' } }, { after: 'k002' }))).rejects.toThrow('a cursor goes with');
  });

  it('stops reading when the caller stops', async () => {
    expect(await collect(mergeShards(pks, {}, { pageSize: 2 }), 5)).toEqual(sks.slice(0, 5));
  });
});

describe('moveToShards (the migration of a table written before the shards)', () => {
  it('moves every entry under AUDIT, TENANTS and LEASES to its shard; a second run moves nothing', async () => {
    const tid = randomBytes(8).toString('hex');
    const audit = { pk: `T#${tid}`, sk: 'AUDIT#01aaaa', gsi1pk: 'AUDIT', gsi1sk: `01aaaa-${tid}` };
    const tenant = { pk: `T#${tid}`, sk: 'TENANT', gsi1pk: 'TENANTS', gsi1sk: `2026-01-01T00:00:00Z#${tid}` };
    const lease = { pk: `T#${tid}`, sk: 'LEASE#l-1', gsi1pk: 'LEASES', gsi1sk: `2026-01-01T00:00:00Z#${tid}#l-1` };
    for (const item of [audit, tenant, lease]) await t.put(item);
    expect(await moveToShards()).toEqual({ AUDIT: 1, TENANTS: 1, LEASES: 1 });
    const at = (i: { pk: string; sk: string }) => t.get({ pk: i.pk, sk: i.sk });
    expect((await at(audit))!.gsi1pk).toBe(keys.auditIndex(audit.gsi1sk).platpk);
    expect((await at(tenant))!.gsi1pk).toBe(`TENANTS#${shardOf(tid)}`);
    expect((await at(lease))!.gsi1pk).toBe(`LEASES#${shardOf('l-1')}`);
    expect(await moveToShards()).toEqual({ AUDIT: 0, TENANTS: 0, LEASES: 0 });
  });
});

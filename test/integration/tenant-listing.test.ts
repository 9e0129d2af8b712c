import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { keys, tenantPk } from '../../lib/store/keys.js';
import { listTenants } from '../../lib/store/tenants.js';
import { table } from './table.js';

/**
 * lib/store/tenants.ts `listTenants` reads the platform-wide TENANTS listing (index plat). No
 * tenant session may name the listing's attributes (infra/grants.ts TenantWrite), and the
 * reader still counts only account items' entries (an entry an older release left).
 */
let t: Awaited<ReturnType<typeof table>>;
beforeAll(async () => {
  t = await table();
});

describe('the TENANTS listing', () => {
  it('lists an account once, however many items of its partition carry a TENANTS# gsi1 key', async () => {
    const tid = await t.account();
    // sorted after every other test's accounts (a listing page starts after the cursor's key)
    const created = `9999-12-31T00:00:00.000Z-${tid}`;
    await t.put({ ...(await t.get(keys.tenant(tid))), ...keys.tenantIndex(tid, created) });
    // a forged entry from the account's own partition
    await t.put({ pk: tenantPk(tid), sk: `SECRET#${randomUUID()}`, ...keys.tenantIndex(tid, created) });
    const ids: string[] = [];
    let cursor: string | undefined = Buffer.from(JSON.stringify({ gsi1sk: created })).toString('base64url');
    do {
      const page = await listTenants(100, cursor);
      ids.push(...page.tenants.map((x) => x.id));
      cursor = page.cursor;
    } while (cursor);
    expect(ids.filter((id) => id === tid)).toHaveLength(1);
  });
});

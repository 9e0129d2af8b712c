import { beforeAll, describe, expect, it } from 'vitest';
import { api, errorCode, newAccount, rootKey, unique, type TestAccount } from '../helpers/api.js';
import { scaled, until } from '../helpers/timeouts.js';

/**
 * GET /api/v1/admin/audit without tenant_id: the platform operator's view of every
 * account's entries (the global audit index, filtered in memory), with each filter, the
 * time range and the cursor. The suite writes entries concurrently, so each assertion is on
 * the entries of this file's accounts within this file's time window.
 */
let a: TestAccount;
let b: TestAccount;
let from: string;
let secretId: string;
let readKeyId: string;

interface Entry {
  id: string;
  tenant_id?: string;
  action: string;
  outcome: string;
  actor: { type: string; id: string; user: string | null };
  resource: { type: string; id: string };
}
async function operator(query: string) {
  const res = await api('GET', `/api/v1/admin/audit?${query}`, { key: rootKey() });
  expect(res.status, res.text).toBe(200);
  return res.body.data as { entries: Entry[]; next_cursor?: string };
}

beforeAll(async () => {
  from = new Date(Date.now() - 1000).toISOString();
  a = await newAccount('audit-op-a');
  b = await newAccount('audit-op-b');
  const created = await api('POST', '/api/v1/secrets', { key: a.adminKey, body: { name: unique('s'), data: { v: 'x' } } });
  expect(created.status, created.text).toBe(201);
  secretId = created.body.data.secret.id;
  await api('POST', '/api/v1/secrets', { key: b.adminKey, body: { name: unique('s'), data: { v: 'y' } } });
  // a denied request of a narrow key
  const narrow = await api('POST', '/api/v1/api-keys', { key: a.adminKey, body: { name: unique('k'), scopes: ['secrets:read'] } });
  readKeyId = narrow.body.data.api_key.id;
  expect((await api('DELETE', `/api/v1/secrets/${created.body.data.secret.name}`, { key: narrow.body.data.api_key.key })).status).toBe(403);
  // entries join the platform's AUDIT listing as the stream relay seals them (about a second
  // later: lib/audit/chain.ts; no tenant session may write a listing key, lib/store/keys.ts)
  const listed = async () => {
    const res = await api('GET', `/api/v1/admin/audit?from=${encodeURIComponent(from)}&limit=1000`, { key: rootKey() });
    const entries = (res.body.data?.entries ?? []) as Entry[];
    const tenants = new Set(entries.filter((e) => e.action === 'secret.create').map((e) => e.tenant_id));
    return tenants.has(a.tenantId) && tenants.has(b.tenantId) && entries.some((e) => e.actor?.id === readKeyId && e.outcome === 'denied');
  };
  await until(listed);
}, scaled(90_000));

describe('the operator view of every account', () => {
  const window = () => `from=${encodeURIComponent(from)}&to=${encodeURIComponent(new Date(Date.now() + 1000).toISOString())}`;
  const ours = (entries: Entry[]) => entries.filter((e) => e.resource?.id === secretId || e.actor?.id === readKeyId || [a.adminEmail, b.adminEmail].includes(e.actor?.user ?? ''));

  it('each filter returns only matching entries, across accounts, newest first', async () => {
    const created = (await operator(`${window()}&action=secret.create&limit=1000`)).entries;
    expect(created.every((e) => e.action === 'secret.create')).toBe(true);
    expect(ours(created).length).toBeGreaterThanOrEqual(2);
    const ids = created.map((e) => e.id);
    expect([...ids].sort().reverse()).toEqual(ids);

    const prefixed = (await operator(`${window()}&action=secret.*&limit=1000`)).entries;
    expect(prefixed.every((e) => e.action.startsWith('secret.'))).toBe(true);
    expect(prefixed.length).toBeGreaterThanOrEqual(created.length);

    const denied = (await operator(`${window()}&outcome=denied&limit=1000`)).entries;
    expect(denied.every((e) => e.outcome === 'denied')).toBe(true);
    expect(denied.some((e) => e.actor.id === readKeyId && e.action === 'access.denied')).toBe(true);

    const bySecret = (await operator(`${window()}&resource_type=secret&resource_id=${secretId}`)).entries;
    expect(bySecret.map((e) => [e.action, e.resource.id])).toEqual([['secret.create', secretId]]);

    const byActorId = (await operator(`${window()}&actor=${readKeyId}&actor_type=api_key`)).entries;
    expect(byActorId.length).toBeGreaterThan(0);
    expect(byActorId.every((e) => e.actor.id === readKeyId && e.actor.type === 'api_key')).toBe(true);

    const byUser = (await operator(`${window()}&actor=${encodeURIComponent(b.adminEmail)}`)).entries;
    expect(byUser.length).toBeGreaterThan(0);
    expect(byUser.every((e) => e.actor.user === b.adminEmail || e.actor.id === b.adminEmail)).toBe(true);

    expect((await operator(`${window()}&actor_type=device&actor=${readKeyId}`)).entries).toEqual([]);
    expect((await operator(`${window()}&resource_type=password&resource_id=${secretId}`)).entries).toEqual([]);
    expect((await operator(`${window()}&action=secret.create&outcome=denied&actor=${readKeyId}`)).entries).toEqual([]);
  });

  it('a time range before this file: none of its entries', async () => {
    const before = new Date(Date.parse(from) - 60_000).toISOString();
    const old = (await operator(`from=${encodeURIComponent(before)}&to=${encodeURIComponent(new Date(Date.parse(from) - 30_000).toISOString())}&limit=1000`)).entries;
    expect(ours(old)).toEqual([]);
  });

  it('pages with a cursor: every entry once, in order; the last page has no cursor', async () => {
    const q = `${window()}&resource_type=secret&action=secret.create`;
    const all = (await operator(`${q}&limit=1000`)).entries.map((e) => e.id);
    expect(all.length).toBeGreaterThanOrEqual(2);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await operator(`${q}&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.entries.length).toBeLessThanOrEqual(1);
      seen.push(...page.entries.map((e) => e.id));
      cursor = page.next_cursor;
      pages++;
    } while (cursor && pages < 1000);
    // entries written meanwhile by other files may precede; the ones listed at first are all there, once
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of all) expect(seen).toContain(id);
  });

  it('a forged or foreign cursor is a 400', async () => {
    const forged = Buffer.from(JSON.stringify({ gsi1pk: 'OTHER', gsi1sk: 'x', pk: 'p', sk: 's' })).toString('base64url');
    const tenantCursor = Buffer.from(JSON.stringify({ sk: 'AUDIT#x' })).toString('base64url');
    for (const cursor of [forged, tenantCursor, Buffer.from('[1,2]').toString('base64url')]) {
      const res = await api('GET', `/api/v1/admin/audit?cursor=${cursor}`, { key: rootKey() });
      expect(res.status).toBe(400);
      expect(errorCode(res)).toBe('bad_request');
    }
  });
});

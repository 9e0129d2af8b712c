import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand, DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { verifyExport } from '../../lib/audit/verify.js';
import { api, canary, errorCode, newAccount, rootKey, unique, type TestAccount } from '../helpers/api.js';

const doc = () =>
  DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint: inject('dynamoEndpoint'), region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
  );

interface Entry {
  id: string;
  tenant_id: string;
  detail?: Record<string, unknown>;
  time: string;
  action: string;
  outcome: string;
  actor: { type: string; id: string; user?: string | null };
  resource: { type: string; id: string; name?: string };
  request_id: string;
  source_ip: string | null;
  user_agent: string | null;
  chain: { seq: number; hash: string } | null;
}

const logs = async (account: TestAccount, query = '', key = account.adminKey) => {
  const res = await api('GET', `/api/v1/audit/logs${query}`, { key });
  expect(res.status, res.text).toBe(200);
  return res as unknown as { status: number; text: string; body: { data: { entries: Entry[]; next_cursor: string | null; total: number } } };
};

let acct: TestAccount;
const values: string[] = [];
let secretId: string;
const name = unique('audited');

beforeAll(async () => {
  acct = await newAccount('audit');
  const v1 = canary('audit1');
  const v2 = canary('audit2');
  values.push(v1, v2);
  const made = await api('POST', '/api/v1/secrets', {
    key: acct.adminKey,
    body: { name, data: { password: v1 } },
    headers: { 'user-agent': 'audit-test/1' },
  });
  expect(made.status).toBe(201);
  secretId = made.body.data.id ?? made.body.data.secret?.id;
  expect(
    (
      await api('PUT', `/api/v1/secrets/${name}`, {
        key: acct.adminKey,
        body: { data: { password: v2 } },
        headers: { 'if-match': made.headers.get('etag')! },
      })
    ).status,
  ).toBe(200);
  // a denied request of an authenticated caller is audited too
  const narrow = await acct.key(['secrets:read']);
  expect((await api('DELETE', `/api/v1/secrets/${name}`, { key: narrow })).status).toBe(403);
});

describe('GET /api/v1/audit/logs', () => {
  it('lists the account entries newest first, with actor, resource, outcome, request id, IP and user agent, never a value', async () => {
    const res = await logs(acct);
    const entries = res.body.data.entries;
    const actions = entries.map((e) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['secret.create', 'secret.update', 'access.denied', 'api_key.create']));
    const ids = entries.map((e) => e.id);
    expect([...ids].sort().reverse()).toEqual(ids);
    const create = entries.find((e) => e.action === 'secret.create')!;
    expect(create).toMatchObject({ outcome: 'success', resource: { type: 'secret', name }, source_ip: '127.0.0.1', user_agent: 'audit-test/1' });
    expect(create.actor).toMatchObject({ type: 'api_key', user: acct.adminEmail });
    expect(create.request_id).toMatch(/^[0-9a-f-]{36}$/);
    const denied = entries.find((e) => e.action === 'access.denied')!;
    expect(denied).toMatchObject({ outcome: 'denied', resource: { type: 'route', id: 'DELETE /api/v1/secrets/{name}' } });
    for (const v of values) expect(res.text).not.toContain(v);
    expect(res.text).not.toMatch(/CANARY-/);
  });

  it('filters by action (exact and prefix), resource, actor, outcome and time range', async () => {
    expect((await logs(acct, '?action=secret.update')).body.data.entries.map((e) => e.action)).toEqual(['secret.update']);
    const family = (await logs(acct, '?action=secret.*')).body.data.entries.map((e) => e.action);
    expect(family.sort()).toEqual(['secret.create', 'secret.update']);
    const byResource = (await logs(acct, `?resource_type=secret&resource_id=${secretId}`)).body.data.entries;
    expect(byResource.length).toBe(2);
    expect((await logs(acct, '?outcome=denied')).body.data.entries.map((e) => e.action)).toEqual(['access.denied']);
    const byActor = (await logs(acct, `?actor=${encodeURIComponent(acct.adminEmail)}&actor_type=api_key`)).body.data.entries;
    expect(byActor.length).toBeGreaterThanOrEqual(4);
    expect((await logs(acct, '?actor=nobody@example.test')).body.data.entries).toEqual([]);
    const all = (await logs(acct)).body.data.entries;
    const oldest = all.at(-1)!;
    const upTo = (await logs(acct, `?to=${encodeURIComponent(oldest.time)}`)).body.data.entries;
    expect(upTo.map((e) => e.id)).toContain(oldest.id);
    expect(upTo.every((e) => Date.parse(e.time) <= Date.parse(oldest.time))).toBe(true);
    const future = (await logs(acct, `?from=${encodeURIComponent(new Date(Date.now() + 3600_000).toISOString())}`)).body.data.entries;
    expect(future).toEqual([]);
  });

  it('pages with a cursor: no entry twice, none lost', async () => {
    const all = (await logs(acct)).body.data.entries.map((e) => e.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: Awaited<ReturnType<typeof logs>> = await logs(acct, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.body.data.entries.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.data.entries.map((e) => e.id));
      cursor = res.body.data.next_cursor;
    } while (cursor);
    // entries written meanwhile (the audit of this listing's own account) come first; the rest match
    expect(seen.slice(-all.length)).toEqual(all);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('400 on bad parameters', async () => {
    for (const q of [
      '?limit=0',
      '?limit=1001',
      '?limit=x',
      '?from=yesterday',
      '?outcome=maybe',
      '?action=a*b',
      '?bogus=1',
      '?cursor=@@@',
      `?from=${encodeURIComponent(new Date().toISOString())}&to=${encodeURIComponent(new Date(Date.now() - 1000).toISOString())}`,
    ]) {
      const res = await api('GET', `/api/v1/audit/logs${q}`, { key: acct.adminKey });
      expect(res.status, q).toBe(400);
      expect(['validation_failed', 'bad_request']).toContain(errorCode(res));
    }
  });

  it('shows only the caller account; the operator sees all accounts', async () => {
    const other = await newAccount('audit-other');
    const mine = new Set((await logs(acct)).body.data.entries.map((e) => e.id));
    const theirs = (await logs(other)).body.data.entries;
    expect(theirs.length).toBeGreaterThan(0);
    expect(theirs.some((e) => mine.has(e.id))).toBe(false);
    const key = await acct.key(['audit:read']);
    const byAuditKey = await logs(acct, '?action=secret.create', key);
    expect(byAuditKey.body.data.entries.length).toBe(1);

    const op = await api('GET', `/api/v1/admin/audit?tenant_id=${acct.tenantId}&action=secret.*`, { key: rootKey() });
    expect(op.status).toBe(200);
    expect(op.body.data.entries.map((e: Entry) => e.action).sort()).toEqual(['secret.create', 'secret.update']);
    const global = await api('GET', '/api/v1/admin/audit?limit=200', { key: rootKey() });
    expect(global.status).toBe(200);
    const tenants = new Set(global.body.data.entries.map((e: { tenant_id: string }) => e.tenant_id));
    expect(tenants.size).toBeGreaterThan(1);
    expect((await api('GET', '/api/v1/admin/audit?tenant_id=nope', { key: rootKey() })).status).toBe(400);
    expect((await api('GET', '/api/v1/admin/audit', { key: acct.adminKey })).status).toBe(403);
  });
});

describe('GET /api/v1/audit/logs/export', () => {
  it('exports JSON Lines whose chain and signed digest verify; CSV carries the digest in a header', async () => {
    const res = await api('GET', '/api/v1/audit/logs/export', { key: acct.adminKey });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    for (const v of values) expect(res.text).not.toContain(v);
    expect(res.text).not.toMatch(/CANARY-/);
    const result = verifyExport(res.text);
    expect(result.problems).toEqual([]);
    expect(result.ok).toBe(true);
    expect(result.count).toBeGreaterThanOrEqual(4);
    const lines = res.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const digest = lines.at(-1);
    expect(digest.digest).toMatchObject({ tenant_id: acct.tenantId, verified: true, problems: [], count: result.count });
    // pinned key: a later export verifies with the key of the first
    const again = await api('GET', '/api/v1/audit/logs/export?format=jsonl', { key: acct.adminKey });
    expect(verifyExport(again.text, { publicKey: digest.digest.public_key }).ok).toBe(true);
    // ... and not with another account's key
    const other = await newAccount('audit-key');
    const otherExport = await api('GET', '/api/v1/audit/logs/export', { key: other.adminKey });
    const otherKey = JSON.parse(otherExport.text.trim().split('\n').at(-1)!).digest.public_key;
    expect(verifyExport(again.text, { publicKey: otherKey }).ok).toBe(false);

    const csv = await api('GET', '/api/v1/audit/logs/export?format=csv', { key: acct.adminKey });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    const rows = csv.text.trim().split('\r\n');
    expect(rows[0]).toMatch(/^id,time,actor_type,actor_id,actor_user,action,resource_type/);
    expect(rows.length).toBeGreaterThan(4);
    const header = JSON.parse(Buffer.from(csv.headers.get('audit-digest')!, 'base64url').toString());
    expect(header.digest).toMatchObject({ tenant_id: acct.tenantId, verified: true });
    expect(csv.text).not.toMatch(/CANARY-/);
  });

  it('a modified, removed or reordered line fails verification', async () => {
    const res = await api('GET', '/api/v1/audit/logs/export', { key: acct.adminKey });
    const lines = res.text.trim().split('\n');
    const modified = [...lines];
    const entry = JSON.parse(modified[1]!);
    entry.action = 'secret.read';
    modified[1] = JSON.stringify(entry);
    const m = verifyExport(modified.join('\n'));
    expect(m.ok).toBe(false);
    expect(m.problems.join(' ')).toMatch(/modified/);
    const removed = [...lines.slice(0, 1), ...lines.slice(2)];
    expect(verifyExport(removed.join('\n')).ok).toBe(false);
    const swapped = [lines[1]!, lines[0]!, ...lines.slice(2)];
    expect(verifyExport(swapped.join('\n')).ok).toBe(false);
    const digest = JSON.parse(lines.at(-1)!);
    digest.digest.count += 1;
    expect(verifyExport([...lines.slice(0, -1), JSON.stringify(digest)].join('\n')).problems.join(' ')).toMatch(/signature|counts/);
  });

  it('an entry modified in the table is reported by the next export, and a deleted one leaves a gap', async () => {
    const victim = await newAccount('audit-tamper');
    for (let i = 0; i < 3; i++) {
      expect((await api('POST', '/api/v1/secrets', { key: victim.adminKey, body: { name: unique('t'), data: { v: canary('t') } } })).status).toBe(
        201,
      );
    }
    const first = await api('GET', '/api/v1/audit/logs/export', { key: victim.adminKey });
    expect(verifyExport(first.text).ok).toBe(true);
    const target = (await logs(victim, '?action=secret.create')).body.data.entries[1]!;
    const table = doc();
    const key = { pk: `T#${victim.tenantId}`, sk: `AUDIT#${target.id}` };
    const before = (await table.send(new GetCommand({ TableName: inject('tableName'), Key: key }))).Item!;
    expect(before.chain).toBeDefined();
    await table.send(
      new UpdateCommand({
        TableName: inject('tableName'),
        Key: key,
        UpdateExpression: 'SET #r.#n = :n',
        ExpressionAttributeNames: { '#r': 'resource', '#n': 'name' },
        ExpressionAttributeValues: { ':n': 'innocent' },
      }),
    );
    const after = await api('GET', '/api/v1/audit/logs/export', { key: victim.adminKey });
    const digest = JSON.parse(after.text.trim().split('\n').at(-1)!).digest;
    expect(digest.verified).toBe(false);
    expect(digest.problems.join(' ')).toContain(target.id);
    expect(verifyExport(after.text).ok).toBe(false);

    await table.send(new DeleteCommand({ TableName: inject('tableName'), Key: key }));
    const gap = await api('GET', '/api/v1/audit/logs/export', { key: victim.adminKey });
    const g = verifyExport(gap.text);
    expect(g.ok).toBe(false);
    expect(g.problems.join(' ')).toMatch(/missing|prev/);
  });

  it('400 on bad parameters', async () => {
    for (const q of ['?format=xml', '?from=x', '?bogus=1', '?cursor=@@@']) {
      expect((await api('GET', `/api/v1/audit/logs/export${q}`, { key: acct.adminKey })).status, q).toBe(400);
    }
  });
});

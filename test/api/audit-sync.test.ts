import { describe, expect, it } from 'vitest';
import { api, canary, errorCode, newAccount, unique, type ApiResponse } from '../helpers/api.js';

describe('GET /api/v1/cli/sync', () => {
  it('a full snapshot lists metadata without values; values only when asked; then changes since the token', async () => {
    const a = await newAccount('sync');
    const v1 = canary('sync1');
    const n1 = unique('s1');
    const n2 = unique('s2');
    expect((await api('POST', '/api/v1/secrets', { key: a.adminKey, body: { name: n1, data: { value: v1 } } })).status).toBe(201);
    expect((await api('POST', '/api/v1/secrets', { key: a.adminKey, body: { name: n2, data: { value: canary('sync2') } } })).status).toBe(201);

    const full = await api('GET', '/api/v1/cli/sync', { key: a.adminKey });
    expect(full.status).toBe(200);
    expect(full.text).not.toMatch(/CANARY-/);
    const d = full.body.data;
    expect(d.full).toBe(true);
    expect(d.sync_token).toEqual(expect.any(String));
    expect(d.account).toMatchObject({ id: a.tenantId, settings: { history_retention_versions: 10 } });
    const names = d.items
      .filter((i: { kind: string }) => i.kind === 'secret')
      .map((i: { name: string }) => i.name)
      .sort();
    expect(names).toEqual([n1, n2].sort());
    expect(d.items.some((i: { kind: string }) => i.kind === 'api_key')).toBe(true);
    expect(JSON.stringify(d.items)).not.toMatch(/"(value|hash|secret|data)":/);

    const withValues = await api('GET', '/api/v1/cli/sync?include_values=true', { key: a.adminKey });
    expect(withValues.body.data.items.find((i: { name: string }) => i.name === n1).data).toEqual({ value: v1 });
    const audited = await api('GET', '/api/v1/audit/logs?action=cli.sync', { key: a.adminKey });
    expect(audited.body.data.entries[0]).toMatchObject({ action: 'cli.sync', detail: { values: true } });
    expect(audited.text).not.toMatch(/CANARY-/);

    // changes since the token: one created, one deleted
    const n3 = unique('s3');
    expect((await api('POST', '/api/v1/secrets', { key: a.adminKey, body: { name: n3, data: { value: canary('sync3') } } })).status).toBe(201);
    const gone = await api('DELETE', `/api/v1/secrets/${n2}`, { key: a.adminKey });
    expect(gone.status).toBe(200);
    const inc = await api('GET', `/api/v1/cli/sync?since=${d.sync_token}`, { key: a.adminKey });
    expect(inc.status).toBe(200);
    expect(inc.body.data.full).toBe(false);
    expect(inc.body.data.items.map((i: { name: string }) => i.name)).toContain(n3);
    expect(inc.body.data.deleted).toContainEqual({ type: 'secret', id: gone.body.data.secret.id });
    expect(inc.text).not.toMatch(/CANARY-/);
    expect(inc.body.data.sync_token).not.toBe(d.sync_token);
  });

  it('pages a large snapshot with a cursor, each item once', async () => {
    const a = await newAccount('syncp');
    for (let i = 0; i < 3; i++) await api('POST', '/api/v1/secrets', { key: a.adminKey, body: { name: unique('p'), data: { value: canary('p') } } });
    const ids: string[] = [];
    let cursor: string | null = null;
    let token: string | undefined;
    let pages = 0;
    do {
      const res: ApiResponse = await api('GET', `/api/v1/cli/sync?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { key: a.adminKey });
      expect(res.status).toBe(200);
      token ??= res.body.data.sync_token;
      expect(res.body.data.sync_token).toBe(token);
      ids.push(...res.body.data.items.map((i: { id: string }) => i.id));
      cursor = res.body.data.next_cursor;
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBeGreaterThan(1);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBe(4); // three secrets and the admin key
  });

  it('400 on another account token, a forged token, unknown parameters; 403 without admin:*', async () => {
    const a = await newAccount('sync4');
    const b = await newAccount('sync4b');
    const token = (await api('GET', '/api/v1/cli/sync', { key: b.adminKey })).body.data.sync_token;
    const foreign = await api('GET', `/api/v1/cli/sync?since=${token}`, { key: a.adminKey });
    expect(foreign.status).toBe(400);
    expect(errorCode(foreign)).toBe('invalid_sync_token');
    for (const q of ['?since=garbage', '?include_values=yes', '?limit=0', '?bogus=1', '?cursor=@@']) {
      expect((await api('GET', `/api/v1/cli/sync${q}`, { key: a.adminKey })).status, q).toBe(400);
    }
    const narrow = await a.key(['secrets:read']);
    expect((await api('GET', '/api/v1/cli/sync', { key: narrow })).status).toBe(403);
  });
});

import { beforeAll, describe, expect, it } from 'vitest';
import { api, canary, errorCode, newAccount, unique, type TestAccount } from '../helpers/api.js';
import { createTyped, store, type Store } from './sharing-helpers.js';

let a: TestAccount;
let b: TestAccount;
let s: Store;
let writer: string;
/** history:read + secrets:read: sees values of versions. */
let historian: string;
/** history:read alone: metadata only. */
let historyOnly: string;

beforeAll(async () => {
  [a, b] = await Promise.all([newAccount('hist-a'), newAccount('hist-b')]);
  [writer, historian, historyOnly] = await Promise.all([
    a.key(['secrets:read', 'secrets:write', 'secrets:delete']),
    a.key(['history:read', 'secrets:read']),
    a.key(['history:read']),
  ]);
  s = await store();
});

/** A secret written `versions` times, each version's value a fresh canary. */
async function secretWithVersions(key: string, versions: number) {
  const name = unique('h');
  const values = [canary('v1')];
  const res = await api('POST', '/api/v1/secrets', { key, body: { name, description: 'd1', data: { value: values[0] } } });
  expect(res.status, res.text).toBe(201);
  const id = res.body.data.secret.id as string;
  for (let v = 2; v <= versions; v++) {
    values.push(canary(`v${v}`));
    const up = await api('PUT', `/api/v1/secrets/${name}`, {
      key,
      body: { description: `d${v}`, data: { value: values[v - 1] } },
      headers: { 'if-match': `"${id}.${v - 1}"` },
    });
    expect(up.status, up.text).toBe(200);
  }
  return { name, id, values };
}

const versionsOf = async (key: string, type: string, id: string) => {
  const res = await api('GET', `/api/v1/${type}/${id}/history`, { key });
  expect(res.status, res.text).toBe(200);
  return (res.body.data.versions as { version: number }[]).map((v) => v.version);
};

describe('GET /api/v1/{type}/{id}/history', () => {
  it('lists the kept versions newest first, metadata only (no values)', async () => {
    const { id, values } = await secretWithVersions(writer, 3);
    const res = await api('GET', `/api/v1/secret/${id}/history`, { key: historian });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ type: 'secret', id, current_version: 3, keep_versions: 10, total: 3 });
    expect(res.body.data.versions.map((v: { version: number }) => v.version)).toEqual([3, 2, 1]);
    expect(res.body.data.versions[0]).toMatchObject({ version: 3, current: true, has_value: true, meta: { description: 'd3' } });
    expect(res.body.data.versions[2]).toMatchObject({ version: 1, current: false, meta: { description: 'd1' } });
    for (const v of values) expect(res.text).not.toContain(v);
  });

  it('works for any stored type: a typed resource written through the shared store, and a container', async () => {
    const ctx = await s.ctxFor(a.tenantId, a.adminEmail);
    const pw = await createTyped(s, ctx, {
      type: 'password',
      name: unique('pw'),
      meta: { description: 'bank' },
      secret: { password: canary('pw1') },
    });
    await s.resources.updateResource(ctx, 'password', pw.id, { secret: { password: canary('pw2') } }, (r) => ({
      action: 'password.update',
      resource: { type: 'password', id: r.id },
    }));
    expect(await versionsOf(a.adminKey, 'password', pw.id)).toEqual([2, 1]);
    const c = await api('POST', '/api/v1/containers', { key: a.adminKey, body: { name: unique('c') } });
    await api('PUT', `/api/v1/containers/${c.body.data.container.id}`, {
      key: a.adminKey,
      body: { description: 'x' },
      headers: { 'if-match': c.headers.get('etag')! },
    });
    expect(await versionsOf(a.adminKey, 'container', c.body.data.container.id)).toEqual([2, 1]);
  });

  it("404 for an unknown type, a missing id, another account's resource, or a type that does not match the id", async () => {
    const { id } = await secretWithVersions(b.adminKey, 1);
    const foreign = await api('GET', `/api/v1/secret/${id}/history`, { key: a.adminKey });
    const missing = await api('GET', '/api/v1/secret/01900000-0000-7000-8000-000000000077/history', { key: a.adminKey });
    expect(foreign.status).toBe(404);
    expect(missing.status).toBe(404);
    expect({ ...foreign.body, request_id: 0 }).toEqual({ ...missing.body, request_id: 0 });
    const mine = await secretWithVersions(writer, 1);
    expect((await api('GET', `/api/v1/password/${mine.id}/history`, { key: a.adminKey })).status).toBe(404);
    const unknown = await api('GET', `/api/v1/widget/${mine.id}/history`, { key: a.adminKey });
    expect(unknown.status).toBe(404);
    expect(errorCode(unknown)).toBe('not_found');
  });

  it('400 on a non-UUID id or a malformed type; 403 without history:read', async () => {
    expect((await api('GET', '/api/v1/secret/not-a-uuid/history', { key: a.adminKey })).status).toBe(400);
    expect((await api('GET', '/api/v1/Secret!/01900000-0000-7000-8000-000000000077/history', { key: a.adminKey })).status).toBe(400);
    const { id } = await secretWithVersions(writer, 1);
    const res = await api('GET', `/api/v1/secret/${id}/history`, { key: writer });
    expect(res.status).toBe(403);
    expect(errorCode(res)).toBe('insufficient_scope');
  });
});

describe('GET /api/v1/{type}/{id}/history/{version}', () => {
  it("returns an older version with its own value to a caller with history:read and the type's read scope", async () => {
    const { id, values } = await secretWithVersions(writer, 3);
    const res = await api('GET', `/api/v1/secret/${id}/history/2`, { key: historian });
    expect(res.status).toBe(200);
    expect(res.body.data.version).toMatchObject({ version: 2, value_redacted: false, data: { value: values[1] }, meta: { description: 'd2' } });
    expect(res.text).not.toContain(values[0]);
    expect(res.text).not.toContain(values[2]);
  });

  it("never shows a value without the type's read scope (history:read alone: metadata, redacted)", async () => {
    const { id, values } = await secretWithVersions(writer, 2);
    const res = await api('GET', `/api/v1/secret/${id}/history/1`, { key: historyOnly });
    expect(res.status).toBe(200);
    expect(res.body.data.version).toMatchObject({ version: 1, value_redacted: true, missing_scopes: ['secrets:read'] });
    expect(res.body.data.version.data).toBeUndefined();
    for (const v of values) expect(res.text).not.toContain(v);
  });

  it("never shows a value without history:read (403), even with the type's read scope", async () => {
    const { id, values } = await secretWithVersions(writer, 2);
    const res = await api('GET', `/api/v1/secret/${id}/history/1`, { key: writer });
    expect(res.status).toBe(403);
    for (const v of values) expect(res.text).not.toContain(v);
  });

  it('404 for a version never written or pruned, and across accounts; 400 on a bad version', async () => {
    const { id } = await secretWithVersions(writer, 2);
    expect((await api('GET', `/api/v1/secret/${id}/history/3`, { key: historian })).status).toBe(404);
    expect((await api('GET', `/api/v1/secret/${id}/history/1`, { key: b.adminKey })).status).toBe(404);
    for (const bad of ['0', 'abc', '-1', '1.5'])
      expect((await api('GET', `/api/v1/secret/${id}/history/${bad}`, { key: historian })).status).toBe(400);
  });
});

describe('history settings', () => {
  it('GET shows the default (10); PUT keeps exactly the configured count, pruning at once and on every later write', async () => {
    const { id, name } = await secretWithVersions(writer, 5);
    const before = await api('GET', `/api/v1/secret/${id}/history-settings`, { key: historyOnly });
    expect(before.status).toBe(200);
    expect(before.body.data.settings).toMatchObject({ keep_versions: 10, default_keep_versions: 10, current_version: 5, stored_versions: 5 });
    const etag = (await api('GET', `/api/v1/secrets/${name}`, { key: writer })).headers.get('etag');

    const put = await api('PUT', `/api/v1/secret/${id}/history-settings`, { key: a.adminKey, body: { keep_versions: 3 } });
    expect(put.status, put.text).toBe(200);
    expect(put.body.data.settings).toMatchObject({ keep_versions: 3, previous_keep_versions: 10, pruned_versions: [1, 2] });
    expect(await versionsOf(historian, 'secret', id)).toEqual([5, 4, 3]);
    // a settings change is not a new version of the secret
    expect((await api('GET', `/api/v1/secrets/${name}`, { key: writer })).headers.get('etag')).toBe(etag);

    let tag = etag!;
    for (let i = 0; i < 4; i++) {
      const up = await api('PUT', `/api/v1/secrets/${name}`, {
        key: writer,
        body: { data: { value: canary('later') } },
        headers: { 'if-match': tag },
      });
      expect(up.status).toBe(200);
      tag = up.headers.get('etag')!;
    }
    expect(await versionsOf(historian, 'secret', id)).toEqual([9, 8, 7]);
    expect((await api('GET', `/api/v1/secret/${id}/history-settings`, { key: historyOnly })).body.data.settings).toMatchObject({
      keep_versions: 3,
      stored_versions: 3,
    });

    // growing the window keeps what exists and lets history grow again
    expect((await api('PUT', `/api/v1/secret/${id}/history-settings`, { key: a.adminKey, body: { keep_versions: 4 } })).status).toBe(200);
    await api('PUT', `/api/v1/secrets/${name}`, { key: writer, body: { data: { value: canary('grow') } }, headers: { 'if-match': tag } });
    expect(await versionsOf(historian, 'secret', id)).toEqual([10, 9, 8, 7]);
    expect((await s.audits(a.tenantId)).filter((e) => e.action === 'history.settings_update' && e.resource.id === id)).toHaveLength(2);
  });

  it('keep_versions: 1 keeps only the current version; typed resources honour the setting on their writes', async () => {
    const ctx = await s.ctxFor(a.tenantId, a.adminEmail);
    const pw = await createTyped(s, ctx, { type: 'password', name: unique('pw'), secret: { password: canary('pw') } });
    expect((await api('PUT', `/api/v1/password/${pw.id}/history-settings`, { key: a.adminKey, body: { keep_versions: 2 } })).status).toBe(200);
    for (let i = 0; i < 3; i++) {
      await s.resources.updateResource(ctx, 'password', pw.id, { secret: { password: canary('pw') } }, (r) => ({
        action: 'password.update',
        resource: { type: 'password', id: r.id },
      }));
    }
    expect(await versionsOf(a.adminKey, 'password', pw.id)).toEqual([4, 3]);
    expect((await api('PUT', `/api/v1/password/${pw.id}/history-settings`, { key: a.adminKey, body: { keep_versions: 1 } })).status).toBe(200);
    expect(await versionsOf(a.adminKey, 'password', pw.id)).toEqual([4]);
  });

  it.each([
    ['0', { keep_versions: 0 }],
    ['over the maximum', { keep_versions: 51 }],
    ['a string', { keep_versions: '3' }],
    ['a fraction', { keep_versions: 2.5 }],
    ['an unknown field', { keep_versions: 3, extra: true }],
    ['an empty body', {}],
  ])('PUT 400 on %s', async (_l, body) => {
    const { id } = await secretWithVersions(writer, 1);
    const res = await api('PUT', `/api/v1/secret/${id}/history-settings`, { key: a.adminKey, body });
    expect(res.status).toBe(400);
    expect(errorCode(res)).toBe('validation_failed');
  });

  it("PUT needs the type's write scope besides sharing:manage (403); 404 across accounts and for unknown types", async () => {
    const { id } = await secretWithVersions(writer, 1);
    const manager = await a.key(['sharing:manage', 'history:read']);
    const res = await api('PUT', `/api/v1/secret/${id}/history-settings`, { key: manager, body: { keep_versions: 2 } });
    expect(res.status).toBe(403);
    expect(errorCode(res)).toBe('insufficient_scope');
    expect((await api('PUT', `/api/v1/secret/${id}/history-settings`, { key: b.adminKey, body: { keep_versions: 2 } })).status).toBe(404);
    expect((await api('GET', `/api/v1/secret/${id}/history-settings`, { key: b.adminKey })).status).toBe(404);
    expect((await api('GET', '/api/v1/secret/nope/history-settings', { key: a.adminKey })).status).toBe(400);
    expect((await api('PUT', '/api/v1/secret/nope/history-settings', { key: a.adminKey, body: { keep_versions: 2 } })).status).toBe(400);
    expect((await api('PUT', `/api/v1/gadget/${id}/history-settings`, { key: a.adminKey, body: { keep_versions: 2 } })).status).toBe(404);
  });
});

describe('a ciphertext copied into another item does not open (store level)', () => {
  it("another secret's head value: the read fails safely (500, no data)", async () => {
    const one = await secretWithVersions(writer, 1);
    const two = await secretWithVersions(writer, 1);
    const source = await s.getItem(s.keys.secret(a.tenantId, one.name));
    await s.setAttribute(s.keys.secret(a.tenantId, two.name), 'value', source!.value);
    const res = await api('GET', `/api/v1/secrets/${two.name}`, { key: writer });
    expect(res.status).toBe(500);
    expect(errorCode(res)).toBe('internal_error');
    expect(res.text).not.toContain(one.values[0]);
    expect(res.text).not.toContain(two.values[0]);
  });

  it("another version's value of the same resource, and another resource's version: history fails safely", async () => {
    const x = await secretWithVersions(writer, 2);
    const y = await secretWithVersions(writer, 1);
    const v1 = await s.getItem(s.keys.version(a.tenantId, 'secret', x.id, 1));
    await s.setAttribute(s.keys.version(a.tenantId, 'secret', x.id, 2), 'value', v1!.value);
    await s.setAttribute(s.keys.version(a.tenantId, 'secret', y.id, 1), 'value', v1!.value);
    for (const [id, version] of [
      [x.id, 2],
      [y.id, 1],
    ] as const) {
      const res = await api('GET', `/api/v1/secret/${id}/history/${version}`, { key: historian });
      expect(res.status).toBe(500);
      expect(res.text).not.toContain(x.values[0]);
    }
    // the untouched version still opens
    expect((await api('GET', `/api/v1/secret/${x.id}/history/1`, { key: historian })).body.data.version.data).toEqual({ value: x.values[0] });
  });

  it("a typed resource's head copied to another id: openSecret refuses it", async () => {
    const ctx = await s.ctxFor(a.tenantId, a.adminEmail);
    const p1 = await createTyped(s, ctx, { type: 'password', name: unique('pw'), secret: { password: canary('p1') } });
    const p2 = await createTyped(s, ctx, { type: 'password', name: unique('pw'), secret: { password: canary('p2') } });
    const head1 = await s.getItem(s.keys.resource(a.tenantId, 'password', p1.id));
    await s.setAttribute(s.keys.resource(a.tenantId, 'password', p2.id), 'value', head1!.value);
    const stored = await s.resources.readResource(a.tenantId, 'password', p2.id);
    await expect(s.resources.openSecret(a.tenantId, stored!.record, stored!.sealed)).rejects.toThrow();
    // and the same bytes in another account's item do not open either
    await expect(s.resources.openSecret(b.tenantId, { type: 'password', id: p1.id, version: 1 }, head1!.value as Uint8Array)).rejects.toThrow();
  });
});

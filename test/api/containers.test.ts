import { beforeAll, describe, expect, it } from 'vitest';
import { api, canary, errorCode, newAccount, unique, type TestAccount } from '../helpers/api.js';
import { createTyped, store, type Store } from './sharing-helpers.js';

let a: TestAccount;
let b: TestAccount;
let s: Store;
let rw: string;

beforeAll(async () => {
  [a, b] = await Promise.all([newAccount('cont-a'), newAccount('cont-b')]);
  rw = await a.key(['containers:read', 'containers:write', 'secrets:read', 'secrets:write', 'secrets:delete']);
  s = await store();
});

async function newContainer(key: string, body: Record<string, unknown> = {}) {
  const res = await api('POST', '/api/v1/containers', { key, body: { name: unique('c'), ...body } });
  expect(res.status, res.text).toBe(201);
  return res.body.data.container as { id: string; name: string; version: number };
}

async function newSecret(key: string, body: Record<string, unknown> = {}) {
  const res = await api('POST', '/api/v1/secrets', { key, body: { name: unique('s'), data: { value: canary('cont') }, ...body } });
  expect(res.status, res.text).toBe(201);
  return res.body.data.secret as { id: string; name: string };
}

describe('POST /api/v1/containers', () => {
  it('creates a container: 201, its metadata, an ETag, member_count 0; audited', async () => {
    const name = unique('prod');
    const res = await api('POST', '/api/v1/containers', { key: rw, body: { name, description: 'production', tags: ['prod', 'prod', 'eu'] } });
    expect(res.status).toBe(201);
    const c = res.body.data.container;
    expect(c).toMatchObject({ name, description: 'production', tags: ['prod', 'eu'], version: 1, member_count: 0 });
    expect(res.headers.get('etag')).toBe(`"${c.id}.1"`);
    expect((await s.audits(a.tenantId)).some((e) => e.action === 'container.create' && e.resource.id === c.id)).toBe(true);
  });

  it('409 on a name already used in the account; the same name is fine in another account', async () => {
    const c = await newContainer(rw);
    const dup = await api('POST', '/api/v1/containers', { key: rw, body: { name: c.name } });
    expect(dup.status).toBe(409);
    expect(errorCode(dup)).toBe('already_exists');
    await newContainer(b.adminKey, { name: c.name });
  });

  it.each([
    ['no name', {}],
    ['an unknown field', { name: 'x', owner: 'me' }],
    ['a name with a slash', { name: 'a/b' }],
    ['a name over 128 characters', { name: 'n'.repeat(129) }],
    ['tags that are not strings', { name: 'x', tags: [1] }],
    ['a description that is not a string', { name: 'x', description: 5 }],
  ])('400 on %s', async (_l, body) => {
    const res = await api('POST', '/api/v1/containers', { key: rw, body });
    expect(res.status).toBe(400);
    expect(errorCode(res)).toBe('validation_failed');
  });

  it('403 with containers:read only', async () => {
    const res = await api('POST', '/api/v1/containers', { key: await a.key(['containers:read']), body: { name: unique('c') } });
    expect(res.status).toBe(403);
    expect(errorCode(res)).toBe('insufficient_scope');
  });
});

describe('GET /api/v1/containers and /{id}', () => {
  it("lists the account's containers with member counts; the item shows its members (never values)", async () => {
    const c = await newContainer(rw);
    const value = canary('member');
    const sec = await newSecret(rw, { container_id: c.id, data: { value } });
    const list = await api('GET', '/api/v1/containers?limit=1000', { key: await a.key(['containers:read']) });
    expect(list.status).toBe(200);
    const listed = list.body.data.containers.find((x: { id: string }) => x.id === c.id);
    expect(listed).toMatchObject({ name: c.name, member_count: 1 });
    expect(list.body.data.containers.every((x: { id: string }) => x.id !== undefined)).toBe(true);
    const one = await api('GET', `/api/v1/containers/${c.id}`, { key: await a.key(['containers:read']) });
    expect(one.status).toBe(200);
    expect(one.body.data.container).toMatchObject({ id: c.id, member_count: 1, members: [{ key: sec.name, type: 'secret', id: sec.id }] });
    expect(one.headers.get('etag')).toBe(`"${c.id}.1"`);
    expect(one.text).not.toContain(value);
  });

  it('pages with limit and cursor', async () => {
    const acct = await newAccount('cont-page');
    for (let i = 0; i < 3; i++) await newContainer(acct.adminKey);
    const first = await api('GET', '/api/v1/containers?limit=2', { key: acct.adminKey });
    expect(first.body.data.containers).toHaveLength(2);
    const next = await api('GET', `/api/v1/containers?limit=2&cursor=${first.body.data.next_cursor}`, { key: acct.adminKey });
    expect(next.body.data.containers).toHaveLength(1);
    expect(next.body.data.next_cursor).toBeNull();
  });

  it("404 for another account's container (same body as a missing one); 400 on a non-UUID id or bad limit", async () => {
    const c = await newContainer(b.adminKey);
    const foreign = await api('GET', `/api/v1/containers/${c.id}`, { key: a.adminKey });
    const missing = await api('GET', '/api/v1/containers/01900000-0000-7000-8000-000000000099', { key: a.adminKey });
    expect(foreign.status).toBe(404);
    expect(missing.status).toBe(404);
    expect({ ...foreign.body, request_id: 0 }).toEqual({ ...missing.body, request_id: 0 });
    expect((await api('GET', '/api/v1/containers/not-a-uuid', { key: a.adminKey })).status).toBe(400);
    expect((await api('GET', '/api/v1/containers?limit=0', { key: a.adminKey })).status).toBe(400);
    expect((await api('GET', '/api/v1/containers?bogus=1', { key: a.adminKey })).status).toBe(400);
  });
});

describe('PUT /api/v1/containers/{id}', () => {
  it('renames (a new version), with If-Match; a stale tag is a 409; a taken name is a 409', async () => {
    const c = await newContainer(rw);
    const other = await newContainer(rw);
    const newName = unique('renamed');
    const res = await api('PUT', `/api/v1/containers/${c.id}`, {
      key: rw,
      body: { name: newName, description: 'd2' },
      headers: { 'if-match': `"${c.id}.1"` },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.container).toMatchObject({ name: newName, description: 'd2', version: 2 });
    expect(res.headers.get('etag')).toBe(`"${c.id}.2"`);
    const stale = await api('PUT', `/api/v1/containers/${c.id}`, { key: rw, body: { description: 'd3' }, headers: { 'if-match': `"${c.id}.1"` } });
    expect(stale.status).toBe(409);
    expect(errorCode(stale)).toBe('stale_etag');
    const taken = await api('PUT', `/api/v1/containers/${c.id}`, { key: rw, body: { name: other.name }, headers: { 'if-match': `"${c.id}.2"` } });
    expect(taken.status).toBe(409);
    expect(errorCode(taken)).toBe('already_exists');
    // the old name is free again, the new one is taken
    await newContainer(rw, { name: c.name });
    const dup = await api('POST', '/api/v1/containers', { key: rw, body: { name: newName } });
    expect(dup.status).toBe(409);
    expect((await s.audits(a.tenantId)).some((e) => e.action === 'container.update' && e.resource.id === c.id)).toBe(true);
  });

  it('another account’s container is a missing one (412 with If-Match, 428 without); 400 on an empty body or unknown field; 412 on a malformed If-Match', async () => {
    const c = await newContainer(b.adminKey);
    const update = { key: a.adminKey, body: { description: 'x' }, headers: { 'if-match': `"${c.id}.1"` } };
    const foreign = await api('PUT', `/api/v1/containers/${c.id}`, update);
    const missing = await api('PUT', '/api/v1/containers/00000000-0000-7000-8000-000000000000', update);
    expect([foreign.status, errorCode(foreign)]).toEqual([412, 'precondition_failed']);
    expect(foreign.body.error).toBe(missing.body.error);
    const blind = await api('PUT', `/api/v1/containers/${c.id}`, { key: a.adminKey, body: { description: 'x' } });
    expect([blind.status, errorCode(blind)]).toEqual([428, 'precondition_required']);
    const mine = await newContainer(rw);
    const headers = { 'if-match': `"${mine.id}.1"` };
    expect((await api('PUT', `/api/v1/containers/${mine.id}`, { key: rw, body: {}, headers })).status).toBe(400);
    expect((await api('PUT', `/api/v1/containers/${mine.id}`, { key: rw, body: { color: 'red' }, headers })).status).toBe(400);
    expect((await api('PUT', `/api/v1/containers/${mine.id}`, { key: rw, body: { description: 'x' }, headers: { 'if-match': 'nope' } })).status).toBe(
      412,
    );
  });
});

describe('DELETE /api/v1/containers/{id}', () => {
  it('409 container_not_empty while a secret is in it; deletable once the secret moved out', async () => {
    const c = await newContainer(rw);
    const sec = await newSecret(rw, { container_id: c.id });
    const refused = await api('DELETE', `/api/v1/containers/${c.id}`, { key: rw });
    expect(refused.status).toBe(409);
    expect(errorCode(refused)).toBe('container_not_empty');
    expect(
      (await api('PUT', `/api/v1/secrets/${sec.name}`, { key: rw, body: { container_id: null }, headers: { 'if-match': `"${sec.id}.1"` } })).status,
    ).toBe(200);
    const ok = await api('DELETE', `/api/v1/containers/${c.id}`, { key: rw });
    expect(ok.status).toBe(200);
    expect((await api('GET', `/api/v1/containers/${c.id}`, { key: rw })).status).toBe(404);
    expect((await s.audits(a.tenantId)).some((e) => e.action === 'container.delete' && e.resource.id === c.id)).toBe(true);
    // its name is free again
    await newContainer(rw, { name: c.name });
  });

  it('a deleted secret leaves the container; a typed resource counts as a member too', async () => {
    const c = await newContainer(rw);
    const sec = await newSecret(rw, { container_id: c.id });
    const pw = await createTyped(s, await s.ctxFor(a.tenantId, a.adminEmail), {
      type: 'password',
      name: unique('pw'),
      secret: { password: canary('pw') },
      container_id: c.id,
    });
    expect((await api('GET', `/api/v1/containers/${c.id}`, { key: rw })).body.data.container.member_count).toBe(2);
    expect((await api('DELETE', `/api/v1/secrets/${sec.name}`, { key: rw })).status).toBe(200);
    expect((await api('DELETE', `/api/v1/containers/${c.id}`, { key: rw })).status).toBe(409);
    await s.resources.deleteResource(await s.ctxFor(a.tenantId, a.adminEmail), 'password', pw.id, (r) => ({
      action: 'password.delete',
      resource: { type: 'password', id: r.id },
    }));
    expect((await api('GET', `/api/v1/containers/${c.id}`, { key: rw })).body.data.container.member_count).toBe(0);
    expect((await api('DELETE', `/api/v1/containers/${c.id}`, { key: rw })).status).toBe(200);
  });

  it("404 for another account's container, which stays", async () => {
    const c = await newContainer(b.adminKey);
    expect((await api('DELETE', `/api/v1/containers/${c.id}`, { key: a.adminKey })).status).toBe(404);
    expect((await api('GET', `/api/v1/containers/${c.id}`, { key: b.adminKey })).status).toBe(200);
  });
});

describe('container membership', () => {
  it("a secret's container must be in the caller's account (404), and nothing is written", async () => {
    const foreign = await newContainer(b.adminKey);
    const name = unique('s');
    const res = await api('POST', '/api/v1/secrets', { key: rw, body: { name, data: { value: canary() }, container_id: foreign.id } });
    expect(res.status).toBe(404);
    expect((await api('GET', `/api/v1/secrets/${name}`, { key: rw })).status).toBe(404);
    expect((await api('GET', `/api/v1/containers/${foreign.id}`, { key: b.adminKey })).body.data.container.member_count).toBe(0);
    const mine = await newSecret(rw);
    expect(
      (await api('PUT', `/api/v1/secrets/${mine.name}`, { key: rw, body: { container_id: foreign.id }, headers: { 'if-match': `"${mine.id}.1"` } }))
        .status,
    ).toBe(404);
  });

  it('moving a secret between containers moves its membership and both counts', async () => {
    const [c1, c2] = [await newContainer(rw), await newContainer(rw)];
    const sec = await newSecret(rw, { container_id: c1.id });
    expect(
      (await api('PUT', `/api/v1/secrets/${sec.name}`, { key: rw, body: { container_id: c2.id }, headers: { 'if-match': `"${sec.id}.1"` } })).status,
    ).toBe(200);
    const [g1, g2] = await Promise.all([
      api('GET', `/api/v1/containers/${c1.id}`, { key: rw }),
      api('GET', `/api/v1/containers/${c2.id}`, { key: rw }),
    ]);
    expect(g1.body.data.container).toMatchObject({ member_count: 0, members: [] });
    expect(g2.body.data.container).toMatchObject({ member_count: 1, members: [{ key: sec.name, id: sec.id }] });
  });

  it('a key is unique inside a container across types: a second resource with the same name there is a 409', async () => {
    const c = await newContainer(rw);
    const sec = await newSecret(rw, { container_id: c.id });
    const ctx = await s.ctxFor(a.tenantId, a.adminEmail);
    await expect(createTyped(s, ctx, { type: 'password', name: sec.name, secret: { password: canary() }, container_id: c.id })).rejects.toMatchObject(
      { status: 409, code: 'already_exists' },
    );
    // nothing of the refused write landed
    expect((await api('GET', `/api/v1/containers/${c.id}`, { key: rw })).body.data.container.member_count).toBe(1);
    // the same name outside that container is fine
    await createTyped(s, ctx, { type: 'password', name: sec.name, secret: { password: canary() } });
  });

  it('concurrent placements into one container and its delete: never an orphaned member', async () => {
    const c = await newContainer(rw);
    const results = await Promise.all([
      ...Array.from({ length: 4 }, () =>
        api('POST', '/api/v1/secrets', { key: rw, body: { name: unique('race'), data: { value: canary() }, container_id: c.id } }),
      ),
      api('DELETE', `/api/v1/containers/${c.id}`, { key: rw }),
    ]);
    const created = results.slice(0, 4).filter((r) => r.status === 201).length;
    const deleted = results[4]!.status === 200;
    const members = (await s.partition(a.tenantId, `CMEMBER#${c.id}#`)).length;
    if (deleted) expect(members).toBe(0);
    else expect((await api('GET', `/api/v1/containers/${c.id}`, { key: rw })).body.data.container.member_count).toBe(members);
    expect(members).toBe(deleted ? 0 : created);
  });
});

import { beforeAll, describe, expect, it } from 'vitest';
import { ApiError, dataOf, errorOf, etagOf, idempotency, ifMatch } from '../../client/index.js';
import { api, canary, errorCode, newAccount, unique, type TestAccount } from '../helpers/api.js';
import { client } from '../helpers/client.js';

let a: TestAccount;
let b: TestAccount;
let reader: string;
let writer: string;

beforeAll(async () => {
  [a, b] = await Promise.all([newAccount('sec-a'), newAccount('sec-b')]);
  [reader, writer] = await Promise.all([a.key(['secrets:read']), a.key(['secrets:read', 'secrets:write', 'secrets:delete'])]);
});

type NewSecret = { name?: string; description?: string; data?: Record<string, string>; tags?: string[] };

/** Creates a secret through the typed client. */
async function createSecret(key: string, body: NewSecret = {}) {
  const name = body.name ?? unique('s');
  const res = await client(key).POST('/api/v1/secrets', { body: { name, data: { value: canary('create') }, ...body } });
  expect(res.response.status, JSON.stringify(res.error)).toBe(201);
  return { name, secret: dataOf(res).secret, etag: etagOf(res)! };
}

const read = (key: string, name: string) => client(key).GET('/api/v1/secrets/{name}', { params: { path: { name } } });

describe('POST /api/v1/secrets', () => {
  it('creates a secret: 201, the secret with its value, an ETag', async () => {
    const value = canary('v');
    const res = await client(writer).POST('/api/v1/secrets', {
      body: { name: unique('db'), description: 'primary db', data: { value, user: 'app' }, tags: ['prod', 'db'] },
      headers: idempotency(),
    });
    expect(res.response.status).toBe(201);
    const s = dataOf(res).secret;
    expect(s).toMatchObject({ description: 'primary db', data: { value, user: 'app' }, tags: ['prod', 'db'], version: 1, container_id: null });
    expect(s.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(etagOf(res)).toBe(`"${s.id}.1"`);
  });

  it('409 on a duplicate name, and the first secret is untouched', async () => {
    const { name } = await createSecret(writer);
    const before = dataOf(await read(reader, name)).secret;
    const dup = await client(writer).POST('/api/v1/secrets', { body: { name, data: { value: canary('dup') } } });
    const error = errorOf(dup);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 409, code: 'already_exists' });
    expect(dataOf(await read(reader, name)).secret).toEqual(before);
  });

  it('a retry with the same Idempotency-Key answers the first outcome; a new key is a new operation', async () => {
    const once = idempotency();
    const body = { name: unique('idem'), data: { value: canary('idem') } };
    const first = await client(writer).POST('/api/v1/secrets', { body, headers: once });
    const retry = await client(writer).POST('/api/v1/secrets', { body, headers: once });
    expect(retry.response.status).toBe(201);
    expect(dataOf(retry).secret.id).toBe(dataOf(first).secret.id);
    const again = await client(writer).POST('/api/v1/secrets', { body, headers: idempotency() });
    expect(errorOf(again)).toMatchObject({ status: 409, code: 'already_exists' });
  });

  it('the same name may exist in two accounts', async () => {
    const { name } = await createSecret(writer);
    await createSecret(b.adminKey, { name });
  });

  it.each([
    ['missing data', { name: 'x1' }],
    ['data not an object', { name: 'x2', data: 'plain' }],
    ['a non-string value', { name: 'x3', data: { value: 42 } }],
    ['empty data', { name: 'x4', data: {} }],
    ['an unknown field', { name: 'x5', data: { value: 'v' }, owner: 'me' }],
    ['a name over 128 characters', { name: 'n'.repeat(129), data: { value: 'v' } }],
    ['a name with a slash', { name: 'a/b', data: { value: 'v' } }],
    ['an empty name', { name: '', data: { value: 'v' } }],
    ['tags not strings', { name: 'x6', data: { value: 'v' }, tags: [1] }],
    ['a container id that is not a UUID', { name: 'x7', data: { value: 'v' }, container_id: 'nope' }],
  ])('400 on %s', async (_label, body) => {
    const res = await api('POST', '/api/v1/secrets', { key: writer, body });
    expect(res.status).toBe(400);
    expect(errorCode(res)).toBe('validation_failed');
    expect(res.body.details.length).toBeGreaterThan(0);
  });

  it('400 on a body that is not JSON, 415 on a non-JSON content type', async () => {
    const bad = await api('POST', '/api/v1/secrets', { key: writer, rawBody: '{"name": "x", ', headers: { 'content-type': 'application/json' } });
    expect(bad.status).toBe(400);
    expect(errorCode(bad)).toBe('invalid_json');
    const form = await api('POST', '/api/v1/secrets', {
      key: writer,
      rawBody: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(415);
  });

  it('400 on JSON nested deeper than the limit, 413 over the body size limit', async () => {
    const deep = await api('POST', '/api/v1/secrets', {
      key: writer,
      rawBody: `${'['.repeat(40)}${']'.repeat(40)}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(deep.status).toBe(400);
    expect(errorCode(deep)).toBe('json_too_deep');
    const big = await api('POST', '/api/v1/secrets', { key: writer, body: { name: 'big', data: { value: 'x'.repeat(1024 * 1024 + 1) } } });
    expect(big.status).toBe(413);
    expect(errorCode(big)).toBe('payload_too_large');
  });

  it('404 for a container that is not in the caller account, and nothing is written', async () => {
    const name = unique('in-container');
    const res = await api('POST', '/api/v1/secrets', {
      key: writer,
      body: { name, data: { value: canary() }, container_id: '01900000-0000-7000-8000-000000000001' },
    });
    expect(res.status).toBe(404);
    expect((await api('GET', `/api/v1/secrets/${name}`, { key: reader })).status).toBe(404);
  });

  it('403 with secrets:read only', async () => {
    const res = await api('POST', '/api/v1/secrets', { key: reader, body: { name: unique('x'), data: { value: canary() } } });
    expect(res.status).toBe(403);
    expect(errorCode(res)).toBe('insufficient_scope');
  });
});

describe('GET /api/v1/secrets/{name}', () => {
  it('returns the value and a strong ETag', async () => {
    const value = canary('get');
    const { name } = await createSecret(writer, { data: { value } });
    const res = await read(reader, name);
    expect(res.response.status).toBe(200);
    expect(dataOf(res).secret.data).toEqual({ value });
    expect(etagOf(res)).toMatch(/^"[0-9a-f-]{36}\.1"$/);
  });

  it("404 for a missing secret and for another account's secret, with the same body", async () => {
    const { name } = await createSecret(b.adminKey);
    const foreign = await api('GET', `/api/v1/secrets/${name}`, { key: a.adminKey });
    const missing = await api('GET', `/api/v1/secrets/${unique('none')}`, { key: a.adminKey });
    expect(foreign.status).toBe(404);
    expect(missing.status).toBe(404);
    const strip = (x: any) => ({ ...x, request_id: undefined });
    expect(strip(foreign.body)).toEqual(strip(missing.body));
  });

  it('400 on an invalid name in the path', async () => {
    const res = await api('GET', `/api/v1/secrets/${'n'.repeat(200)}`, { key: reader });
    expect(res.status).toBe(400);
  });

  it('403 with a key of other scopes', async () => {
    const key = await a.key(['credentials:read']);
    const { name } = await createSecret(writer);
    expect((await api('GET', `/api/v1/secrets/${name}`, { key })).status).toBe(403);
  });
});

describe('GET /api/v1/secrets', () => {
  it('lists metadata without values; total is the page size; limit/offset/cursor page through', async () => {
    const acct = await newAccount('list');
    const names = [];
    for (let i = 0; i < 5; i++) names.push((await createSecret(acct.adminKey, { name: `item-${i}` })).name);
    const list = (query: { limit?: number; offset?: number; cursor?: string } = {}) =>
      client(acct.adminKey).GET('/api/v1/secrets', { params: { query } });
    const all = await list();
    expect(all.response.status).toBe(200);
    expect(dataOf(all).total).toBe(5);
    expect(dataOf(all).secrets.map((s) => s.name)).toEqual(names);
    for (const s of dataOf(all).secrets) expect(s).not.toHaveProperty('data');
    expect(JSON.stringify(all.data)).not.toContain('CANARY');

    const page1 = dataOf(await list({ limit: 2 }));
    expect(page1.secrets.map((s) => s.name)).toEqual(names.slice(0, 2));
    expect(page1.total).toBe(2);
    const page2 = dataOf(await list({ limit: 2, cursor: page1.next_cursor! }));
    expect(page2.secrets.map((s) => s.name)).toEqual(names.slice(2, 4));
    const offset = dataOf(await list({ limit: 2, offset: 3 }));
    expect(offset.secrets.map((s) => s.name)).toEqual(names.slice(3, 5));
    expect(dataOf(await list({ offset: 10 }))).toMatchObject({ secrets: [], total: 0 });
  });

  it("never lists another account's secrets", async () => {
    const { name } = await createSecret(b.adminKey);
    const res = await client(a.adminKey).GET('/api/v1/secrets', { params: { query: { limit: 1000 } } });
    expect(dataOf(res).secrets.map((s) => s.name)).not.toContain(name);
  });

  it.each(['limit=0', 'limit=1001', 'limit=abc', 'offset=-1', 'cursor=garbage', 'unknown=1'])('400 on %s', async (q) => {
    const res = await api('GET', `/api/v1/secrets?${q}`, { key: reader });
    expect(res.status).toBe(400);
  });

  it('accepts the limits 1 and 1000', async () => {
    for (const limit of [1, 1000]) expect((await client(reader).GET('/api/v1/secrets', { params: { query: { limit } } })).response.status).toBe(200);
  });
});

describe('PUT /api/v1/secrets/{name}', () => {
  it('partial update keeps absent fields, bumps the version and the ETag', async () => {
    const value = canary('old');
    const { name } = await createSecret(writer, { data: { value }, description: 'd1', tags: ['t'] });
    const get = await read(reader, name);
    const res = await client(writer).PUT('/api/v1/secrets/{name}', {
      params: { path: { name }, header: ifMatch(etagOf(get)!) },
      body: { description: 'd2' },
    });
    expect(res.response.status).toBe(200);
    expect(dataOf(res).secret).toMatchObject({ description: 'd2', data: { value }, tags: ['t'], version: 2 });
    expect(etagOf(res)).toBe(`"${dataOf(get).secret.id}.2"`);
    const newValue = canary('new');
    const upd = await client(writer).PUT('/api/v1/secrets/{name}', {
      params: { path: { name }, header: ifMatch(etagOf(res)!) },
      body: { data: { value: newValue } },
    });
    expect(dataOf(upd).secret).toMatchObject({ data: { value: newValue }, version: 3, description: 'd2' });
  });

  it('409 on a stale If-Match, 412 on a malformed one or a missing secret', async () => {
    const { name } = await createSecret(writer);
    const first = await api('GET', `/api/v1/secrets/${name}`, { key: reader });
    const etag = first.headers.get('etag')!;
    expect((await api('PUT', `/api/v1/secrets/${name}`, { key: writer, body: { description: 'x' }, headers: { 'if-match': etag } })).status).toBe(
      200,
    );
    const stale = await api('PUT', `/api/v1/secrets/${name}`, { key: writer, body: { description: 'y' }, headers: { 'if-match': etag } });
    expect(stale.status).toBe(409);
    expect(errorCode(stale)).toBe('stale_etag');
    const malformed = await api('PUT', `/api/v1/secrets/${name}`, { key: writer, body: { description: 'y' }, headers: { 'if-match': 'W/"abc"' } });
    expect(malformed.status).toBe(412);
    const missing = await api('PUT', `/api/v1/secrets/${unique('none')}`, { key: writer, body: { description: 'y' }, headers: { 'if-match': etag } });
    expect(missing.status).toBe(412);
    const wildcard = await api('PUT', `/api/v1/secrets/${name}`, { key: writer, body: { description: 'z' }, headers: { 'if-match': '*' } });
    expect(wildcard.status).toBe(200);
  });

  it('428 without If-Match (the message says to send the ETag of a GET), and nothing changes', async () => {
    const { name } = await createSecret(writer, { description: 'd1' });
    const blind = await api('PUT', `/api/v1/secrets/${name}`, { key: writer, body: { description: 'blind' } });
    expect(blind.status).toBe(428);
    expect(errorCode(blind)).toBe('precondition_required');
    expect(blind.body.error).toMatch(/If-Match/);
    expect(blind.body.error).toMatch(/ETag/);
    expect(blind.body.error).toMatch(/GET/);
    const after = await api('GET', `/api/v1/secrets/${name}`, { key: reader });
    expect(after.body.data.secret).toMatchObject({ description: 'd1', version: 1 });
    // the ETag read is then the way through, and the CLI's `secrets set` flow (GET, then PUT with it) works
    const ok = await api('PUT', `/api/v1/secrets/${name}`, {
      key: writer,
      body: { description: 'd2' },
      headers: { 'if-match': after.headers.get('etag')! },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.data.secret).toMatchObject({ description: 'd2', version: 2 });
  });

  it('20 parallel PUTs with the same ETag: exactly one 200, the rest 409', async () => {
    const { name } = await createSecret(writer);
    const etag = (await api('GET', `/api/v1/secrets/${name}`, { key: reader })).headers.get('etag')!;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api('PUT', `/api/v1/secrets/${name}`, { key: writer, body: { data: { value: canary(`race${i}`) } }, headers: { 'if-match': etag } }),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    const final = await api('GET', `/api/v1/secrets/${name}`, { key: reader });
    expect(final.body.data.secret.version).toBe(2);
    const winner = results.find((r) => r.status === 200)!;
    expect(final.body.data.secret.data).toEqual(winner.body.data.secret.data);
  });

  it("404 for another account's secret; 400 on bad fields or an empty body", async () => {
    const { name } = await createSecret(b.adminKey);
    // another account's secret answers exactly as a name that does not exist (no If-Match: 428; `*`: 412)
    expect((await api('PUT', `/api/v1/secrets/${name}`, { key: writer, body: { description: 'x' } })).status).toBe(428);
    const foreign = await api('PUT', `/api/v1/secrets/${name}`, { key: writer, body: { description: 'x' }, headers: { 'if-match': '*' } });
    const none = await api('PUT', `/api/v1/secrets/${unique('none')}`, { key: writer, body: { description: 'x' }, headers: { 'if-match': '*' } });
    expect([foreign.status, errorCode(foreign)]).toEqual([412, 'precondition_failed']);
    expect([none.status, errorCode(none)]).toEqual([412, 'precondition_failed']);
    const mine = await createSecret(writer);
    for (const body of [{}, { name: 'rename' }, { data: { value: 1 } }, { description: 5 }]) {
      const res = await api('PUT', `/api/v1/secrets/${mine.name}`, { key: writer, body, headers: { 'if-match': mine.etag } });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
  });
});

describe('DELETE /api/v1/secrets/{name}', () => {
  it('deletes; then 404; the name can be reused and the old ETag does not match the new secret', async () => {
    const { name } = await createSecret(writer);
    const oldTag = (await api('GET', `/api/v1/secrets/${name}`, { key: reader })).headers.get('etag')!;
    const del = await client(writer).DELETE('/api/v1/secrets/{name}', { params: { path: { name } }, headers: ifMatch(oldTag) });
    expect(del.response.status).toBe(200);
    expect(dataOf(del)).toMatchObject({ deleted: true, secret: { name } });
    expect((await api('GET', `/api/v1/secrets/${name}`, { key: reader })).status).toBe(404);
    expect((await api('DELETE', `/api/v1/secrets/${name}`, { key: writer })).status).toBe(404);
    await createSecret(writer, { name });
    const stale = await api('PUT', `/api/v1/secrets/${name}`, { key: writer, body: { description: 'x' }, headers: { 'if-match': oldTag } });
    expect(stale.status).toBe(409);
  });

  it('403 without secrets:delete, 404 across accounts, 400 on a bad name', async () => {
    const { name } = await createSecret(writer);
    const rw = await a.key(['secrets:read', 'secrets:write']);
    expect((await api('DELETE', `/api/v1/secrets/${name}`, { key: rw })).status).toBe(403);
    expect((await api('DELETE', `/api/v1/secrets/${name}`, { key: b.adminKey })).status).toBe(404);
    expect((await api('DELETE', `/api/v1/secrets/${'x'.repeat(129)}`, { key: writer })).status).toBe(400);
    expect((await api('GET', `/api/v1/secrets/${name}`, { key: reader })).status).toBe(200);
  });
});

import { beforeAll, describe, expect, it } from 'vitest';
import { CREDENTIAL_TYPES, type CredentialType } from './credential-types.js';
import type { Client } from 'openapi-fetch';
import { dataOf, errorOf, etagOf, idempotency, ifMatch } from '../../client/index.js';
import { api, errorCode, newAccount, unique, type TestAccount } from '../helpers/api.js';
import { client } from '../helpers/client.js';
import { expectNotStored } from './credentials-helpers.js';
import { FIXTURES, hex, MNEMONIC, notCanary } from './credential-fixtures.js';

/**
 * Every collection the generic CRUD serves (the 17 typed credential collections, passwords,
 * crypto wallets), driven by the registry: create → list (metadata only) → get (secret
 * fields) → update (the type's PUT semantics) → delete, 400 on schema violations, 404
 * across accounts. Secret values are canaries where the format allows; the others (hex and
 * base32 keys, a mnemonic) are searched for in the table and the log explicitly.
 */
const SERVED = CREDENTIAL_TYPES.filter((t) => !t.ownRoutes);

let a: TestAccount;
let b: TestAccount;
beforeAll(async () => {
  [a, b] = await Promise.all([newAccount('cred-a'), newAccount('cred-b')]);
});

const keyFor = (acct: TestAccount, def: CredentialType) => acct.key([...new Set([...def.scopes.read, ...def.scopes.write, ...def.scopes.delete])]);

/**
 * The typed client over the collection a case of the loop tests: the path is a value here
 * (one of the 19 collections), so the client is used through its untyped face; the
 * collection's types are the same for every case (lib/credentials/schemas.ts).
 */
const collection = (key: string) => client(key) as unknown as Client<any>;
/** What a collection answers, read by the loop's keys (`def.type`, `def.listKey`). */
const data = (result: Parameters<typeof dataOf>[0]) => dataOf(result) as Record<string, any>;

describe('registry', () => {
  it('has a fixture for every collection the generic CRUD serves (17 credential collections, passwords, wallets)', () => {
    expect(SERVED.map((t) => t.type).sort()).toEqual(Object.keys(FIXTURES).sort());
    expect(SERVED.filter((t) => t.scopes.read.includes('credentials:read'))).toHaveLength(17);
  });
});

describe.each(SERVED)('$path ($type)', (def) => {
  const fx = FIXTURES[def.type]!;
  const secretsOf = (body: Record<string, unknown>) => Object.fromEntries(def.secret.filter((k) => body[k] !== undefined).map((k) => [k, body[k]]));

  it('create → list (metadata only) → get (secret fields) → update → delete, through the typed client', async () => {
    const key = await keyFor(a, def);
    const api = collection(key);
    const one = { params: { path: { id: '' } } };
    const fields = fx.create();
    const secrets = secretsOf(fields);
    const name = unique('c');
    const made = await api.POST(def.path, { body: { name, description: 'first', tags: ['t1'], ...fields }, headers: idempotency() });
    expect(made.response.status, JSON.stringify(made.error)).toBe(201);
    const c = data(made)[def.type];
    one.params.path.id = c.id;
    expect(c).toMatchObject({ name, type: def.type, description: 'first', tags: ['t1'], version: 1 });
    expect(etagOf(made)).toBe(`"${c.id}.1"`);
    for (const [k, v] of Object.entries(secrets)) if (!def.withheld?.includes(k)) expect(c[k]).toEqual(v);

    const listed = await api.GET(def.path, {});
    expect(listed.response.status).toBe(200);
    const item = data(listed)[def.listKey].find((x: { id: string }) => x.id === c.id);
    expect(item).toMatchObject({ id: c.id, name, type: def.type });
    for (const k of def.secret) expect(item).not.toHaveProperty(k);
    expect(item.secret_fields.sort()).toEqual(c.secret_fields.sort());
    const listedText = JSON.stringify(listed.data);
    for (const v of Object.values(secrets)) expect(listedText).not.toContain(typeof v === 'string' ? v : JSON.stringify(v).slice(1, -1));

    const got = await api.GET(`${def.path}/{id}`, one);
    expect(got.response.status).toBe(200);
    expect(etagOf(got)).toBe(`"${c.id}.1"`);
    const g = data(got)[def.type];
    for (const [k, v] of Object.entries(secrets)) expect(g[k]).toEqual(def.withheld?.includes(k) ? undefined : v);
    for (const k of def.withheld ?? []) expect(JSON.stringify(got.data)).not.toContain(`"${k}":`);

    const body = fx.update(fields);
    const put = await api.PUT(`${def.path}/{id}`, { ...one, body, headers: ifMatch(etagOf(got)!) });
    expect(put.response.status, JSON.stringify(put.error)).toBe(200);
    expect(etagOf(put)).toBe(`"${c.id}.2"`);
    const after = data(await api.GET(`${def.path}/{id}`, one))[def.type];
    expect(after.version).toBe(2);
    expect(after.name).toBe(body.name ?? name);
    for (const [k, v] of Object.entries(fx.updated)) expect(after[k], k).toEqual(v);
    for (const [k, v] of Object.entries(secrets)) if (!(k in body) && !def.withheld?.includes(k)) expect(after[k], `${k} kept`).toEqual(v);
    if (def.update === 'replace') expect(after.description).toBe(body.description ?? '');
    else expect(after.description).toBe(body.description ?? 'first');

    const stale = await api.PUT(`${def.path}/{id}`, { ...one, body, headers: ifMatch(etagOf(got)!) });
    expect(errorOf(stale)).toMatchObject({ status: 409, code: 'stale_etag' });

    const del = await api.DELETE(`${def.path}/{id}`, one);
    expect(del.response.status).toBe(200);
    expect(dataOf(del)).toMatchObject({ deleted: true, [def.type]: { id: c.id } });
    expect(errorOf(await api.GET(`${def.path}/{id}`, one))).toMatchObject({ status: 404, code: 'not_found' });
    expect(errorOf(await api.DELETE(`${def.path}/{id}`, one))).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('404 across accounts, with the body of a missing resource', async () => {
    const made = await api('POST', def.path, { key: await keyFor(a, def), body: { name: unique('x'), ...fx.create() } });
    expect(made.status, made.text).toBe(201);
    const id = made.body.data[def.type].id;
    const other = b.adminKey;
    const missing = await api('GET', `${def.path}/00000000-0000-7000-8000-000000000000`, { key: other });
    for (const method of ['GET', 'DELETE'] as const) {
      const res = await api(method, `${def.path}/${id}`, { key: other });
      expect(res.status, `${method} ${res.text}`).toBe(404);
      expect(errorCode(res)).toBe('not_found');
      expect(res.body.error).toBe(missing.body.error);
    }
    // a PUT names the version it read (428 without): for another account's resource, as for a missing one, none exists (412)
    const update = { body: fx.update(made.body.data[def.type]), headers: { 'if-match': `"${id}.1"` } };
    const put = await api('PUT', `${def.path}/${id}`, { key: other, ...update });
    const putMissing = await api('PUT', `${def.path}/00000000-0000-7000-8000-000000000000`, { key: other, ...update });
    expect([put.status, errorCode(put)], put.text).toEqual([412, 'precondition_failed']);
    expect(put.body.error).toBe(putMissing.body.error);
    expect((await api('PUT', `${def.path}/${id}`, { key: other, body: update.body })).status).toBe(428);
    const listed = await api('GET', def.path, { key: other });
    expect(listed.body.data[def.listKey].some((x: { id: string }) => x.id === id)).toBe(false);
    expect((await api('GET', `${def.path}/${id}`, { key: await keyFor(a, def) })).status).toBe(200);
  });

  it('400 on schema violations: wrong types, bad values, unknown fields, a bad id', async () => {
    const key = await keyFor(a, def);
    for (const fields of fx.invalid) {
      const res = await api('POST', def.path, { key, body: { name: 'bad', ...fields } });
      expect(res.status, JSON.stringify(fields)).toBe(400);
      expect(['validation_failed', 'bad_request', 'invalid_key']).toContain(errorCode(res));
    }
    const unknown = await api('POST', def.path, { key, body: { name: 'x', ...fx.create(), owner: 'me' } });
    expect(unknown.status).toBe(400);
    expect(errorCode(unknown)).toBe('validation_failed');
    expect((await api('POST', def.path, { key, body: { ...fx.create() } })).status).toBe(400); // no name
    expect((await api('POST', def.path, { key })).status).toBe(400); // no body
    expect((await api('GET', `${def.path}/not-a-uuid`, { key })).status).toBe(400);
    expect((await api('GET', `${def.path}?limit=0`, { key })).status).toBe(400);
    const made = await api('POST', def.path, { key, body: { name: unique('u'), ...fx.create() } });
    const putUnknown = await api('PUT', `${def.path}/${made.body.data[def.type].id}`, {
      key,
      body: { ...fx.update(made.body.data[def.type]), colour: 'red' },
      headers: { 'if-match': made.headers.get('etag')! },
    });
    expect(putUnknown.status).toBe(400);
    expect(errorCode(putUnknown)).toBe('validation_failed');
  });
});

describe('values that cannot be canaries', () => {
  it('are not stored or logged in plaintext', async () => {
    expect(notCanary.length).toBeGreaterThan(3);
    await expectNotStored([...notCanary, MNEMONIC]);
  });
});

describe('immutable fields', () => {
  it('a YubiKey PUT may repeat its key material, not change it (400 immutable_field)', async () => {
    const key = a.adminKey;
    const fields = FIXTURES.yubikey!.create();
    const made = await api('POST', '/api/v1/yubikeys', { key, body: { name: 'yk', ...fields } });
    const id = made.body.data.yubikey.id;
    const repeated = await api('PUT', `/api/v1/yubikeys/${id}`, {
      key,
      body: { name: 'yk', ...fields, model: 'YubiKey 5C' },
      headers: { 'if-match': made.headers.get('etag')! },
    });
    expect(repeated.status).toBe(200);
    const changed = await api('PUT', `/api/v1/yubikeys/${id}`, {
      key,
      body: { name: 'yk', ...fields, aes_key: hex(16) },
      headers: { 'if-match': repeated.headers.get('etag')! },
    });
    expect(changed.status).toBe(400);
    expect(errorCode(changed)).toBe('immutable_field');
  });
});

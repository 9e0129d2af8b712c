import { beforeAll, describe, expect, it } from 'vitest';
import { api, canary, errorCode, newAccount, unique, type TestAccount } from '../helpers/api.js';
import { createTyped, store, type Store } from './sharing-helpers.js';

/** a owns; b and c are users of other accounts (their admin keys act for their admin e-mails). */
let a: TestAccount;
let b: TestAccount;
let c: TestAccount;
let s: Store;
let owner: string;

beforeAll(async () => {
  [a, b, c] = await Promise.all([newAccount('share-a'), newAccount('share-b'), newAccount('share-c')]);
  owner = await a.key(['secrets:read', 'secrets:write', 'sharing:manage', 'history:read']);
  s = await store();
});

async function ownedSecret(key = owner) {
  const value = canary('shared');
  const res = await api('POST', '/api/v1/secrets', { key, body: { name: unique('sh'), description: 'shared db password', data: { value } } });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.data.secret.id as string, name: res.body.data.secret.name as string, value };
}

async function share(type: string, id: string, body: Record<string, unknown>, key = owner) {
  const res = await api('POST', `/api/v1/${type}/${id}/shares`, { key, body });
  expect(res.status, res.text).toBe(201);
  return res.body.data.share as { id: string; permission: string; shared_with_email: string };
}

describe('POST /api/v1/{type}/{id}/shares', () => {
  it('shares a secret with a user of another account: 201; listed on the resource; audited', async () => {
    const sec = await ownedSecret();
    const res = await api('POST', `/api/v1/secret/${sec.id}/shares`, {
      key: owner,
      body: { shared_with_email: b.adminEmail.toUpperCase(), permission: 'read' },
    });
    expect(res.status).toBe(201);
    expect(res.body.data.share).toMatchObject({
      type: 'secret',
      resource_id: sec.id,
      resource_name: sec.name,
      shared_with_email: b.adminEmail,
      permission: 'read',
    });
    expect(res.text).not.toContain(sec.value);
    const list = await api('GET', `/api/v1/secret/${sec.id}/shares`, { key: owner });
    expect(list.status).toBe(200);
    expect(list.body.data.shares).toEqual([res.body.data.share]);
    expect((await s.audits(a.tenantId)).some((e) => e.action === 'share.create' && e.resource.id === sec.id)).toBe(true);
  });

  it('409 when the resource is already shared with that user; permission defaults to read', async () => {
    const sec = await ownedSecret();
    const first = await share('secret', sec.id, { shared_with_email: b.adminEmail });
    expect(first.permission).toBe('read');
    const again = await api('POST', `/api/v1/secret/${sec.id}/shares`, {
      key: owner,
      body: { shared_with_email: b.adminEmail, permission: 'write' },
    });
    expect(again.status).toBe(409);
    expect(errorCode(again)).toBe('already_exists');
  });

  it.each([
    ['an invalid e-mail', { shared_with_email: 'not-an-email', permission: 'read' }],
    ['a missing e-mail', { permission: 'read' }],
    ['an unknown permission', { shared_with_email: 'x@example.test', permission: 'admin' }],
    ['an unknown field', { shared_with_email: 'x@example.test', permission: 'read', note: 'hi' }],
    ['a non-string e-mail', { shared_with_email: 42 }],
  ])('400 on %s', async (_l, body) => {
    const sec = await ownedSecret();
    const res = await api('POST', `/api/v1/secret/${sec.id}/shares`, { key: owner, body });
    expect(res.status).toBe(400);
    expect(errorCode(res)).toBe('validation_failed');
  });

  it('400 for sharing with oneself, a write share of a type whose update does not honour it, or a container', async () => {
    const sec = await ownedSecret(a.adminKey);
    expect((await api('POST', `/api/v1/secret/${sec.id}/shares`, { key: a.adminKey, body: { shared_with_email: a.adminEmail } })).status).toBe(400);
    const pw = await createTyped(s, await s.ctxFor(a.tenantId, a.adminEmail), {
      type: 'password',
      name: unique('pw'),
      secret: { password: canary('pw') },
    });
    const write = await api('POST', `/api/v1/password/${pw.id}/shares`, {
      key: a.adminKey,
      body: { shared_with_email: b.adminEmail, permission: 'write' },
    });
    expect(write.status).toBe(400);
    expect(errorCode(write)).toBe('bad_request');
    const cont = await api('POST', '/api/v1/containers', { key: a.adminKey, body: { name: unique('c') } });
    expect(
      (await api('POST', `/api/v1/container/${cont.body.data.container.id}/shares`, { key: a.adminKey, body: { shared_with_email: b.adminEmail } }))
        .status,
    ).toBe(400);
  });

  it("404 for something the caller cannot read: another account's resource, a missing one, an unknown type", async () => {
    const theirs = await ownedSecret(b.adminKey);
    expect((await api('POST', `/api/v1/secret/${theirs.id}/shares`, { key: a.adminKey, body: { shared_with_email: c.adminEmail } })).status).toBe(
      404,
    );
    expect(
      (
        await api('POST', '/api/v1/secret/01900000-0000-7000-8000-000000000055/shares', {
          key: a.adminKey,
          body: { shared_with_email: c.adminEmail },
        })
      ).status,
    ).toBe(404);
    const mine = await ownedSecret();
    expect((await api('POST', `/api/v1/sprocket/${mine.id}/shares`, { key: a.adminKey, body: { shared_with_email: c.adminEmail } })).status).toBe(
      404,
    );
    // a recipient cannot re-share what was shared with it
    await share('secret', theirs.id, { shared_with_email: a.adminEmail }, b.adminKey);
    expect((await api('POST', `/api/v1/secret/${theirs.id}/shares`, { key: a.adminKey, body: { shared_with_email: c.adminEmail } })).status).toBe(
      404,
    );
  });

  it("403 without the type's read scope (sharing:manage alone)", async () => {
    const sec = await ownedSecret();
    const manager = await a.key(['sharing:manage']);
    const res = await api('POST', `/api/v1/secret/${sec.id}/shares`, { key: manager, body: { shared_with_email: b.adminEmail } });
    expect(res.status).toBe(403);
    expect(errorCode(res)).toBe('insufficient_scope');
  });

  it('GET shares: 404 across accounts, 400 on a bad id', async () => {
    const sec = await ownedSecret();
    expect((await api('GET', `/api/v1/secret/${sec.id}/shares`, { key: b.adminKey })).status).toBe(404);
    expect((await api('GET', '/api/v1/secret/xyz/shares', { key: owner })).status).toBe(400);
  });
});

describe('the recipient', () => {
  it('reads the shared secret through the normal GET route (by id), and sees it in shared-with-me', async () => {
    const sec = await ownedSecret();
    const sh = await share('secret', sec.id, { shared_with_email: b.adminEmail });
    const read = await api('GET', `/api/v1/secrets/${sec.id}`, { key: await b.key(['secrets:read']) });
    expect(read.status, read.text).toBe(200);
    expect(read.body.data.secret).toMatchObject({
      id: sec.id,
      name: sec.name,
      data: { value: sec.value },
      shared: { share_id: sh.id, permission: 'read', owner_tenant_id: a.tenantId },
    });
    const mine = await api('GET', '/api/v1/shared-with-me', { key: await b.key(['secrets:read']) });
    expect(mine.status).toBe(200);
    expect(mine.body.data.shared_with).toBe(b.adminEmail);
    expect(mine.body.data.shares).toContainEqual(
      expect.objectContaining({
        id: sh.id,
        type: 'secret',
        resource_id: sec.id,
        owner_tenant_id: a.tenantId,
        read_path: `/api/v1/secrets/${sec.id}`,
      }),
    );
    expect(mine.text).not.toContain(sec.value);
  });

  it("a revoked share fails on the recipient's very next read; revoking twice or from another account is a 404", async () => {
    const sec = await ownedSecret();
    const sh = await share('secret', sec.id, { shared_with_email: b.adminEmail });
    const reader = await b.key(['secrets:read']);
    expect((await api('GET', `/api/v1/secrets/${sec.id}`, { key: reader })).status).toBe(200);
    expect((await api('DELETE', `/api/v1/shares/${sh.id}`, { key: b.adminKey })).status).toBe(404);
    const revoked = await api('DELETE', `/api/v1/shares/${sh.id}`, { key: owner });
    expect(revoked.status).toBe(200);
    expect(revoked.body.data).toMatchObject({ revoked: true, share: { id: sh.id } });
    const after = await api('GET', `/api/v1/secrets/${sec.id}`, { key: reader });
    expect(after.status).toBe(404);
    expect(after.text).not.toContain(sec.value);
    expect((await api('GET', '/api/v1/shared-with-me', { key: reader })).body.data.shares.map((x: { id: string }) => x.id)).not.toContain(sh.id);
    expect((await api('GET', `/api/v1/secret/${sec.id}/shares`, { key: owner })).body.data.shares).toEqual([]);
    expect((await api('DELETE', `/api/v1/shares/${sh.id}`, { key: owner })).status).toBe(404);
    expect((await s.audits(a.tenantId)).some((e) => e.action === 'share.revoke' && e.detail?.share_id === sh.id)).toBe(true);
    // it can be shared again afterwards
    await share('secret', sec.id, { shared_with_email: b.adminEmail });
  });

  it('DELETE /shares/{share_id}: 400 on a non-UUID id; 404 for an unknown one', async () => {
    expect((await api('DELETE', '/api/v1/shares/nope', { key: owner })).status).toBe(400);
    expect((await api('DELETE', '/api/v1/shares/01900000-0000-7000-8000-000000000044', { key: owner })).status).toBe(404);
  });

  it("another user cannot read it (404, as for a missing secret); the router's scope of the GET route still applies", async () => {
    const sec = await ownedSecret();
    const sh = await share('secret', sec.id, { shared_with_email: b.adminEmail });
    const other = await api('GET', `/api/v1/secrets/${sec.id}`, { key: c.adminKey });
    expect(other.status).toBe(404);
    expect(other.text).not.toContain(sec.value);
    expect((await api('GET', '/api/v1/shared-with-me', { key: c.adminKey })).body.data.shares.map((x: { id: string }) => x.id)).not.toContain(sh.id);
    // listing one's own shares needs no scope (metadata only); reading a secret needs secrets:read at the router
    const narrow = await b.key(['audit:read']);
    expect((await api('GET', '/api/v1/shared-with-me', { key: narrow })).body.data.shares.map((x: { id: string }) => x.id)).toContain(sh.id);
    expect((await api('GET', `/api/v1/secrets/${sec.id}`, { key: narrow })).status).toBe(403);
    expect((await api('GET', '/api/v1/shared-with-me?limit=0', { key: narrow })).status).toBe(400);
    expect((await api('GET', '/api/v1/shared-with-me?offset=-1', { key: narrow })).status).toBe(400);
  });

  it('reads a shared password of another account through GET /api/v1/passwords/{id} (handler-scoped: the share is the permission)', async () => {
    const password = canary('shared-pw');
    const made = await api('POST', '/api/v1/passwords', { key: a.adminKey, body: { name: unique('pw'), username: 'alice', password } });
    expect(made.status, made.text).toBe(201);
    const id = made.body.data.password.id as string;
    const recipient = await b.key(['audit:read']);
    expect((await api('GET', `/api/v1/passwords/${id}`, { key: recipient })).status).toBe(404);
    const sh = await share('password', id, { shared_with_email: b.adminEmail }, a.adminKey);
    const read = await api('GET', `/api/v1/passwords/${id}`, { key: recipient });
    expect(read.status, read.text).toBe(200);
    expect(read.text).toContain(password);
    expect((await api('GET', '/api/v1/shared-with-me', { key: recipient })).body.data.shares).toContainEqual(
      expect.objectContaining({ id: sh.id, read_path: `/api/v1/passwords/${id}` }),
    );
    expect((await api('DELETE', `/api/v1/shares/${sh.id}`, { key: a.adminKey })).status).toBe(200);
    expect((await api('GET', `/api/v1/passwords/${id}`, { key: recipient })).status).toBe(404);
  });

  it('400 for a type whose read route does not honour shares yet (it would be unreadable)', async () => {
    const key = await createTyped(s, await s.ctxFor(a.tenantId, a.adminEmail), {
      type: 'ssh_key',
      name: unique('k'),
      meta: { algorithm: 'ed25519' },
      secret: { private_key: canary('k') },
    });
    const res = await api('POST', `/api/v1/ssh_key/${key.id}/shares`, { key: a.adminKey, body: { shared_with_email: b.adminEmail } });
    expect(res.status).toBe(400);
    expect(errorCode(res)).toBe('bad_request');
  });

  it('a recipient never sees history, shares or temporary access of the shared resource', async () => {
    const sec = await ownedSecret();
    await share('secret', sec.id, { shared_with_email: b.adminEmail });
    for (const path of ['history', 'history/1', 'history-settings', 'shares', 'temp-access']) {
      expect((await api('GET', `/api/v1/secret/${sec.id}/${path}`, { key: b.adminKey })).status).toBe(404);
    }
    expect((await api('POST', `/api/v1/secret/${sec.id}/temp-access`, { key: b.adminKey, body: { duration_seconds: 600 } })).status).toBe(404);
  });

  it('with a write share, updates the value through the normal PUT route; a read share does not allow it', async () => {
    const sec = await ownedSecret();
    const readOnly = await ownedSecret();
    const sh = await share('secret', sec.id, { shared_with_email: b.adminEmail, permission: 'write' });
    await share('secret', readOnly.id, { shared_with_email: b.adminEmail, permission: 'read' });
    const rw = await b.key(['secrets:read', 'secrets:write']);
    const value = canary('by-recipient');
    const up = await api('PUT', `/api/v1/secrets/${sec.id}`, { key: rw, body: { data: { value } }, headers: { 'if-match': `"${sec.id}.1"` } });
    expect(up.status, up.text).toBe(200);
    expect(up.body.data.secret).toMatchObject({ version: 2, updated_by: b.adminEmail, shared: { share_id: sh.id, permission: 'write' } });
    expect((await api('GET', `/api/v1/secrets/${sec.name}`, { key: owner })).body.data.secret.data).toEqual({ value });
    const audit = (await s.audits(a.tenantId)).find((e) => e.action === 'secret.update' && e.resource.id === sec.id);
    expect(audit?.actor).toMatchObject({ user: b.adminEmail, tenant_id: b.tenantId });
    // through a read share the secret is not there for a write: If-Match names a resource that does not exist (412)
    const viaRead = await api('PUT', `/api/v1/secrets/${readOnly.id}`, {
      key: rw,
      body: { data: { value: canary() } },
      headers: { 'if-match': `"${readOnly.id}.1"` },
    });
    expect([viaRead.status, errorCode(viaRead)]).toEqual([412, 'precondition_failed']);
    expect(
      (await api('PUT', `/api/v1/secrets/${sec.id}`, { key: rw, body: { container_id: null }, headers: { 'if-match': `"${sec.id}.2"` } })).status,
    ).toBe(400);
    expect((await api('DELETE', `/api/v1/secrets/${sec.id}`, { key: b.adminKey })).status).toBe(404);
  });
});

describe('resolveReadable (the one read-access check other GET routes call)', () => {
  it('owner with the read scope (403 without); recipient via share; 404 after revocation or for others', async () => {
    const ctxA = await s.ctxFor(a.tenantId, a.adminEmail);
    const pw = await createTyped(s, ctxA, { type: 'password', name: unique('pw'), secret: { password: canary('pw') } });
    const own = await s.access.resolveReadable(ctxA, 'password', pw.id);
    expect(own).toMatchObject({ tenantId: a.tenantId, via: 'owner', record: { id: pw.id } });
    await expect(s.access.resolveReadable(await s.ctxFor(a.tenantId, a.adminEmail, ['secrets:read']), 'password', pw.id)).rejects.toMatchObject({
      status: 403,
    });

    const sh = await share('password', pw.id, { shared_with_email: b.adminEmail }, a.adminKey);
    const ctxB = await s.ctxFor(b.tenantId, b.adminEmail, ['passwords:read']);
    const viaShare = await s.access.resolveReadable(ctxB, 'password', pw.id);
    expect(viaShare).toMatchObject({ tenantId: a.tenantId, via: 'share', share: { id: sh.id } });
    expect(await s.resources.openSecret(viaShare.tenantId, viaShare.record, viaShare.sealed)).toMatchObject({
      password: expect.stringContaining('CANARY-pw'),
    });
    // the share is the permission: the recipient's credential needs no passwords:read for it
    expect(await s.access.resolveReadable(await s.ctxFor(b.tenantId, b.adminEmail, ['audit:read']), 'password', pw.id)).toMatchObject({
      via: 'share',
    });
    // a credential without a user has no shares
    await expect(s.access.resolveReadable(await s.ctxFor(b.tenantId, null), 'password', pw.id)).rejects.toMatchObject({ status: 404 });
    await expect(s.access.resolveReadable(await s.ctxFor(c.tenantId, c.adminEmail), 'password', pw.id)).rejects.toMatchObject({ status: 404 });
    await expect(s.access.resolveReadable(ctxB, 'ssh_key', pw.id)).rejects.toMatchObject({ status: 404 });
    await expect(s.access.resolveReadable(ctxB, 'nonsense', pw.id)).rejects.toMatchObject({ status: 404 });

    expect((await api('DELETE', `/api/v1/shares/${sh.id}`, { key: a.adminKey })).status).toBe(200);
    await expect(s.access.resolveReadable(ctxB, 'password', pw.id)).rejects.toMatchObject({ status: 404 });
  });
});

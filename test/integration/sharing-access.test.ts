import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CallContext } from '../../lib/auth/principal.js';
import { table } from './table.js';
import * as access from '../../lib/sharing/access.js';
import { createResource } from '../../lib/resources/store.js';
import { shareItems } from '../../lib/sharing/store/shares.js';
import { transact } from '../../lib/store/tx.js';
import { HttpError, notFound } from '../../lib/core/errors.js';

/**
 * lib/sharing/access.ts against the suite's table: the one read-access rule. The owner's
 * account reads with the type's read scope; a user an active share names reads from any
 * account (the share is the permission); anything else is the same 404.
 */
let t: Awaited<ReturnType<typeof table>>;

beforeAll(async () => {
  t = await table();
});

function ctxOf(tenantId: string, fields: { user?: string | null; scopes?: string[] } = {}): CallContext {
  return {
    principal: { kind: 'api_key', tenantId, tenant: { id: tenantId, status: 'active' } as never, id: randomUUID(), user: fields.user === undefined ? `u-${tenantId.slice(0, 6)}@unit.example` : fields.user, scopes: fields.scopes ?? ['admin:*'], operator: false },
    requestId: 'r',
    sourceIp: null,
    userAgent: null,
  };
}
/** A password of a new account, with its secret part sealed. */
async function password(secret = 'CANARY-shared') {
  const owner = await t.account();
  const rec = await createResource(ctxOf(owner), { type: 'password', name: `p-${randomUUID().slice(0, 8)}`, meta: { username: 'u' }, secret: { password: secret } }, (r) => ({
    action: 'password.create',
    resource: { type: 'password', id: r.id, name: r.name },
  }));
  return { owner, id: rec.id, name: rec.name };
}
async function share(owner: string, type: string, resourceId: string, email: string, permission: 'read' | 'write' = 'read') {
  const s = { id: randomUUID(), type, resource_id: resourceId, resource_name: 'n', owner_tenant_id: owner, shared_with_email: email, permission, created_at: new Date().toISOString(), created_by: null };
  await transact(shareItems(s));
  return s;
}
async function rejection(p: Promise<unknown>) {
  try {
    await p;
    return 'resolved';
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    return { status: error.status, code: error.code, message: error.message };
  }
}

describe('resolveReadable', () => {
  it('the owner reads its own resource with the read scope: via owner, the head and the sealed value', async () => {
    const p = await password();
    const r = await access.resolveReadable(ctxOf(p.owner, { scopes: ['passwords:read'] }), 'password', p.id);
    expect(r).toMatchObject({ tenantId: p.owner, via: 'owner', record: { id: p.id, name: p.name, type: 'password' } });
    expect(r.share).toBeUndefined();
    expect(Buffer.from(r.sealed!)[0]).toBe(1);
    expect(r.item).toMatchObject({ id: p.id });
  });

  it('without the read scope the owner gets 403 (not 404: the resource is theirs)', async () => {
    const p = await password();
    expect(await rejection(access.resolveReadable(ctxOf(p.owner, { scopes: ['secrets:read'] }), 'password', p.id))).toEqual({
      status: 403,
      code: 'insufficient_scope',
      message: 'missing scope: passwords:read',
    });
  });

  it('a user an active share names reads it from another account, without the type scope there', async () => {
    const p = await password();
    const reader = await t.account();
    const s = await share(p.owner, 'password', p.id, 'reader@unit.example');
    const r = await access.resolveReadable(ctxOf(reader, { user: 'Reader@Unit.Example', scopes: [] }), 'password', p.id);
    expect(r).toMatchObject({ tenantId: p.owner, via: 'share', share: { id: s.id, owner_tenant_id: p.owner }, record: { id: p.id } });
    expect(isSealed(r.sealed)).toBe(true);
  });

  it('everything else is the same 404: another account, no share, a share for someone else, a suspended owner, an unknown type', async () => {
    const p = await password();
    const other = await t.account();
    const missing = { status: 404, code: 'not_found', message: 'password not found' };
    expect(await rejection(access.resolveReadable(ctxOf(other), 'password', p.id))).toEqual(missing);
    await share(p.owner, 'password', p.id, 'someone@unit.example');
    expect(await rejection(access.resolveReadable(ctxOf(other, { user: 'else@unit.example' }), 'password', p.id))).toEqual(missing);
    expect(await rejection(access.resolveReadable(ctxOf(other, { user: null }), 'password', p.id))).toEqual(missing);
    expect(await rejection(access.resolveReadable(ctxOf(other), 'password', randomUUID()))).toEqual(missing);
    expect(await rejection(access.resolveReadable(ctxOf(other), 'no_such_type', p.id))).toEqual({ status: 404, code: 'not_found', message: 'resource type not found' });
    const q = await password();
    await share(q.owner, 'password', q.id, 'late@unit.example');
    await t.put({ ...(await t.get({ pk: `T#${q.owner}`, sk: 'TENANT' }))!, status: 'suspended' } as never);
    expect(await rejection(access.resolveReadable(ctxOf(other, { user: 'late@unit.example' }), 'password', q.id))).toEqual(missing);
    // a type name with underscores reads as words in the 404
    expect(await rejection(access.resolveReadable(ctxOf(other), 'api_token', randomUUID()))).toMatchObject({ message: 'api token not found' });
  });
});

const isSealed = (b: Uint8Array | undefined) => b !== undefined && Buffer.from(b)[0] === 1;

describe('shares', () => {
  it('activeShareFor: read by default; write only with a write share; the share of this user, type and id', async () => {
    const p = await password();
    const reader = await t.account();
    await share(p.owner, 'password', p.id, 'r@unit.example', 'read');
    await share(p.owner, 'password', p.id, 'w@unit.example', 'write');
    const r = ctxOf(reader, { user: 'r@unit.example' });
    const w = ctxOf(reader, { user: 'W@unit.example' });
    expect(await access.activeShareFor(r, 'password', p.id)).toMatchObject({ shared_with_email: 'r@unit.example', permission: 'read' });
    expect(await access.activeShareFor(r, 'password', p.id, 'write')).toBeUndefined();
    expect(await access.activeShareFor(w, 'password', p.id, 'write')).toMatchObject({ permission: 'write' });
    expect(await access.activeShareFor(w, 'password', p.id, 'read')).toMatchObject({ permission: 'write' });
    expect(await access.activeShareFor(r, 'secret', p.id)).toBeUndefined();
    expect(await access.activeShareFor(ctxOf(reader, { user: null }), 'password', p.id)).toBeUndefined();
    expect(await access.isSharedWith(r, 'password', p.id)).toBe(true);
    expect(await access.isSharedWith(ctxOf(reader, { user: 'x@unit.example' }), 'password', p.id)).toBe(false);
  });

  it('activeShareFor: nothing when the owner account is gone or suspended', async () => {
    const p = await password();
    await share(p.owner, 'password', p.id, 'g@unit.example');
    await t.remove({ pk: `T#${p.owner}`, sk: 'TENANT' });
    expect(await access.activeShareFor(ctxOf(randomUUID(), { user: 'g@unit.example' }), 'password', p.id)).toBeUndefined();
  });

  it('sharedHead: the owner tenant, head and share; nothing once the resource is gone or for an unknown type', async () => {
    const p = await password();
    await share(p.owner, 'password', p.id, 'h@unit.example', 'write');
    const c = ctxOf(await t.account(), { user: 'h@unit.example' });
    const got = await access.sharedHead(c, 'password', p.id, 'write');
    expect(got).toMatchObject({ tenantId: p.owner, share: { permission: 'write' } });
    expect(got!.head.record.id).toBe(p.id);
    expect(await access.sharedHead(c, 'password', p.id)).toBeDefined();
    const gone = randomUUID();
    await share(p.owner, 'password', gone, 'h@unit.example');
    expect(await access.sharedHead(c, 'password', gone)).toBeUndefined();
    await expect(access.sharedHead(c, 'nope', p.id)).rejects.toMatchObject({ status: 404 });
  });

  it('recipientOf: the principal user, lower-cased; null without one', () => {
    expect(access.recipientOf(ctxOf('t', { user: 'MiXeD@Example.COM' }))).toBe('mixed@example.com');
    expect(access.recipientOf(ctxOf('t', { user: null }))).toBeNull();
  });
});

describe('ownOrShared', () => {
  it('the caller account first; on its 404, the owner account of an active share; other errors and other 404s stay', async () => {
    const p = await password();
    const reader = await t.account();
    await share(p.owner, 'password', p.id, 'o@unit.example');
    const reads: string[] = [];
    const read = async (tenantId: string) => {
      reads.push(tenantId);
      if (tenantId !== p.owner) throw notFound('password');
      return `value of ${tenantId}`;
    };
    expect(await access.ownOrShared(ctxOf(reader, { user: 'o@unit.example' }), 'password', p.id, read)).toBe(`value of ${p.owner}`);
    expect(reads).toEqual([reader, p.owner]);
    // own resource: one read
    reads.length = 0;
    expect(await access.ownOrShared(ctxOf(p.owner), 'password', p.id, read)).toBe(`value of ${p.owner}`);
    expect(reads).toEqual([p.owner]);
    // no share: the caller's own 404
    await expect(access.ownOrShared(ctxOf(reader, { user: 'none@unit.example' }), 'password', p.id, read)).rejects.toMatchObject({ status: 404, message: 'password not found' });
    // not a 404: as it is, no share lookup
    const boom = new Error('boom');
    await expect(access.ownOrShared(ctxOf(reader, { user: 'o@unit.example' }), 'password', p.id, async () => Promise.reject(boom))).rejects.toBe(boom);
    const forbidden = new HttpError(403, 'x', 'y');
    // the owner's account would answer: still, only a 404 of the caller's own account falls back to a share
    const onlyOwner = (e: unknown) => async (tenantId: string) => {
      if (tenantId !== p.owner) throw e;
      return 'owner value';
    };
    await expect(access.ownOrShared(ctxOf(reader, { user: 'o@unit.example' }), 'password', p.id, onlyOwner(forbidden))).rejects.toBe(forbidden);
    await expect(access.ownOrShared(ctxOf(reader, { user: 'o@unit.example' }), 'password', p.id, onlyOwner(boom))).rejects.toBe(boom);
    await expect(access.ownOrShared(ctxOf(reader, { user: 'o@unit.example' }), 'password', p.id, onlyOwner(notFound('password')))).resolves.toBe('owner value');
  });

  it('a share of the caller own account does not make a second read of the same account', async () => {
    const p = await password();
    await share(p.owner, 'password', p.id, 'self@unit.example');
    let n = 0;
    const miss = notFound('password');
    await expect(
      access.ownOrShared(ctxOf(p.owner, { user: 'self@unit.example' }), 'password', p.id, async () => {
        n++;
        throw miss;
      }),
    ).rejects.toBe(miss);
    expect(n).toBe(1);
  });
});

describe('shareReadPath', () => {
  it('the item path of a type whose GET route honours shares; undefined otherwise', () => {
    const id = randomUUID();
    expect(access.shareReadPath('secret', id)).toBe(`/api/v1/secrets/${id}`);
    // the typed credentials and passwords (their GET /{id} routes honour shares)
    expect(access.shareReadPath('password', id)).toBe(`/api/v1/passwords/${id}`);
    expect(access.SHARE_AWARE_GET_HANDLERS.has('secrets/secrets.get')).toBe(true);
    expect([...access.SHARE_AWARE_GET_HANDLERS].some((h) => h.startsWith('credentials/'))).toBe(true);
    expect(access.SHARE_AWARE_GET_HANDLERS.has('')).toBe(false);
    expect(access.shareReadPath('nope', id)).toBeUndefined();
    expect(access.shareReadPath('ssh_key', id)).toBeUndefined();
    expect(access.SHARE_AWARE_GET_HANDLERS.has('secrets/secrets.get')).toBe(true);
  });
});

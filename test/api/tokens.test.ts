import { beforeAll, describe, expect, it } from 'vitest';
import { api, errorCode, newAccount, rootKey, type TestAccount } from '../helpers/api.js';
import { expectNotStored } from './credentials-helpers.js';

/**
 * Personal API tokens: shown once, only a hash stored, scopes limited to the creator's,
 * authenticating on bearer routes; a rotated token's old secret is refused on the next
 * request (or after the grace period asked for); a deleted or expired token is refused.
 */
let a: TestAccount;
let b: TestAccount;
let manager: string;
const issued: string[] = [];

beforeAll(async () => {
  [a, b] = await Promise.all([newAccount('tok-a'), newAccount('tok-b')]);
  manager = await a.key(['tokens:read', 'tokens:write', 'credentials:read']);
});

async function createToken(body: Record<string, unknown>, key = manager) {
  const res = await api('POST', '/api/v1/api-tokens', { key, body: { name: 'ci', scopes: ['credentials:read'], ...body } });
  expect(res.status, res.text).toBe(201);
  issued.push(res.body.data.api_token.token);
  return res.body.data.api_token as { id: string; token: string; prefix: string; scopes: string[]; expires_at: string };
}

const works = async (token: string) => (await api('GET', '/api/v1/computer-credentials', { key: token })).status;

describe('/api/v1/api-tokens', () => {
  it('creates a token shown once, which authenticates with its scopes only', async () => {
    const t = await createToken({ description: 'for CI' });
    expect(t.token).toMatch(/^scp_[a-z2-7]{8}_[A-Za-z0-9_-]{43}$/);
    expect(t.token.startsWith(t.prefix)).toBe(true);
    expect(t.scopes).toEqual(['credentials:read']);
    expect(Date.parse(t.expires_at) - Date.now()).toBeGreaterThan(89 * 86_400_000);
    expect(await works(t.token)).toBe(200);
    const denied = await api('GET', '/api/v1/secrets', { key: t.token });
    expect(denied.status).toBe(403);
    expect(errorCode(denied)).toBe('insufficient_scope');

    const got = await api('GET', `/api/v1/api-tokens/${t.id}`, { key: manager });
    expect(got.status).toBe(200);
    expect(got.body.data.api_token).toMatchObject({ id: t.id, name: 'ci', prefix: t.prefix, scopes: ['credentials:read'], description: 'for CI' });
    const listed = await api('GET', '/api/v1/api-tokens', { key: manager });
    expect(listed.body.data.api_tokens.some((x: { id: string }) => x.id === t.id)).toBe(true);
    for (const r of [got, listed]) {
      expect(r.text).not.toContain(t.token);
      expect(r.text).not.toContain('hash');
    }
  });

  it('cannot carry scopes its creator lacks (403 scope_escalation), nor unknown scopes or bad expiries (400)', async () => {
    const res = await api('POST', '/api/v1/api-tokens', { key: manager, body: { name: 'x', scopes: ['secrets:read'] } });
    expect(res.status).toBe(403);
    expect(errorCode(res)).toBe('scope_escalation');
    for (const body of [
      { name: 'x', scopes: ['nope:read'] },
      { name: 'x', scopes: [] },
      { name: 'x', scopes: ['credentials:read'], expires_at: '2001-01-01T00:00:00Z' },
      { name: 'x', scopes: ['credentials:read'], expires_at: new Date(Date.now() + 400 * 86_400_000).toISOString() },
      { name: 'x', scopes: ['credentials:read'], owner: 'me' },
    ]) {
      expect((await api('POST', '/api/v1/api-tokens', { key: manager, body })).status, JSON.stringify(body)).toBe(400);
    }
    // a token may create tokens, within its own scopes
    const t = await createToken({ scopes: ['tokens:read', 'tokens:write', 'credentials:read'] });
    const child = await api('POST', '/api/v1/api-tokens', { key: t.token, body: { name: 'child', scopes: ['credentials:write'] } });
    expect(child.status).toBe(403);
  });

  it('rotation: the old secret is refused on the very next request', async () => {
    const t = await createToken({});
    const rotated = await api('POST', `/api/v1/api-tokens/${t.id}/rotate`, { key: manager, body: {} });
    expect(rotated.status, rotated.text).toBe(200);
    const n = rotated.body.data.api_token;
    issued.push(n.token);
    expect(n.token).not.toBe(t.token);
    expect(n).toMatchObject({ id: t.id, scopes: t.scopes, expires_at: t.expires_at });
    const old = await api('GET', '/api/v1/computer-credentials', { key: t.token });
    expect(old.status).toBe(401);
    expect(await works(n.token)).toBe(200);
    expect((await api('POST', `/api/v1/api-tokens/${t.id}/rotate`, { key: manager })).status).toBe(200); // no body
  });

  it('rotation with a grace period keeps the old secret valid until it ends; the next rotation ends it', async () => {
    const t = await createToken({});
    const first = await api('POST', `/api/v1/api-tokens/${t.id}/rotate`, { key: manager, body: { grace_seconds: 600 } });
    const second = first.body.data.api_token;
    issued.push(second.token);
    expect(Date.parse(second.previous_valid_until) - Date.now()).toBeGreaterThan(590_000);
    expect(await works(t.token)).toBe(200);
    expect(await works(second.token)).toBe(200);
    const again = await api('POST', `/api/v1/api-tokens/${t.id}/rotate`, { key: manager, body: { grace_seconds: 0 } });
    issued.push(again.body.data.api_token.token);
    expect(await works(t.token)).toBe(401);
    expect(await works(second.token)).toBe(401);
    expect(await works(again.body.data.api_token.token)).toBe(200);
    expect((await api('POST', `/api/v1/api-tokens/${t.id}/rotate`, { key: manager, body: { grace_seconds: 90_000 } })).status).toBe(400);
  });

  it('a deleted token is refused; another account sees 404', async () => {
    const t = await createToken({});
    for (const [m, p] of [
      ['GET', ''],
      ['POST', '/rotate'],
      ['DELETE', ''],
    ] as const) {
      const res = await api(m, `/api/v1/api-tokens/${t.id}${p}`, { key: b.adminKey, body: m === 'POST' ? {} : undefined });
      expect(res.status).toBe(404);
    }
    expect(await works(t.token)).toBe(200);
    expect((await api('DELETE', `/api/v1/api-tokens/${t.id}`, { key: manager })).status).toBe(200);
    expect(await works(t.token)).toBe(401);
    expect((await api('GET', `/api/v1/api-tokens/${t.id}`, { key: manager })).status).toBe(404);
  });

  it('an expired token is refused with credentials_expired', async () => {
    const t = await createToken({ expires_at: new Date(Date.now() + 1500).toISOString() });
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(t.expires_at) - Date.now() + 100)));
    const res = await api('GET', '/api/v1/computer-credentials', { key: t.token });
    expect(res.status).toBe(401);
    expect(errorCode(res)).toBe('credentials_expired');
  });

  it('is never a platform-operator credential, even with admin:* of an operator account', async () => {
    const res = await api('POST', '/api/v1/api-tokens', { key: rootKey(), body: { name: 'op', scopes: ['admin:*'] } });
    expect(res.status).toBe(201);
    issued.push(res.body.data.api_token.token);
    const op = await api('GET', '/api/v1/admin/tenants', { key: res.body.data.api_token.token });
    expect(op.status).toBe(403);
    expect(errorCode(op)).toBe('operator_required');
  });

  it('token values are stored only as hashes and never logged', async () => {
    expect(issued.length).toBeGreaterThan(5);
    await expectNotStored(issued);
  });
});

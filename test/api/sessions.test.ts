import { readFileSync } from 'node:fs';
import { generateKeyPair, type JWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api, errorCode, newAccount, rootKey, type TestAccount } from '../helpers/api.js';
import { findLeaks } from '../helpers/leaks.js';
import { admitted, librarySession, refresh, type Tokens } from './sign-in.helpers.js';

/**
 * Users and sessions: refresh-token rotation, reuse detection revoking the whole family,
 * sign-out effective on the next request, the operator's list of an account's users, and
 * the credential diagnostics.
 */
let a: TestAccount;
let b: TestAccount;
/** Every refresh token handed out: none may reach the table or the log. */
const spent: string[] = [];
const keep = (t: Tokens) => {
  spent.push(t.refresh_token);
  return t;
};

beforeAll(async () => {
  [a, b] = await Promise.all([newAccount('sess'), newAccount('sess-b')]);
});

describe('POST /api/v1/auth/refresh', () => {
  it('rotates: the new pair works, the old refresh token is spent (a retry gets the same new one until that is used), and presenting it again revokes the whole family', async () => {
    const first = keep(await librarySession(a.tenantId, a.adminEmail));
    expect(first.scope).toBe('admin:*');
    expect(await admitted(first.access_token)).toBe(true);

    const r1 = await refresh(first.refresh_token);
    expect(r1.status, r1.text).toBe(200);
    const second = keep(r1.body.data as Tokens);
    expect(second.session_id).toBe(first.session_id);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.expires_in).toBe(900);
    expect(await admitted(second.access_token)).toBe(true);

    // a retry within the window (the answer was lost) gets the same new refresh token
    const retry = await refresh(first.refresh_token);
    expect(retry.status, retry.text).toBe(200);
    expect(retry.body.data.refresh_token).toBe(second.refresh_token);
    expect(await admitted(retry.body.data.access_token)).toBe(true);
    // the new token is used: the chain moves on, and the old token is a replay
    const r2 = await refresh(second.refresh_token);
    expect(r2.status, r2.text).toBe(200);
    const third = keep(r2.body.data as Tokens);

    const replay = await refresh(first.refresh_token);
    expect(replay.status).toBe(401);
    expect(errorCode(replay)).toBe('refresh_token_reused');
    // the family is revoked: the newest refresh token and every access token of the session
    const newest = await refresh(third.refresh_token);
    expect(newest.status).toBe(401);
    expect(await admitted(third.access_token)).toBe(false);
    expect(await admitted(second.access_token)).toBe(false);
    expect(await admitted(first.access_token)).toBe(false);
    // presenting a spent token of a revoked family again: still refused, as reuse
    expect(errorCode(await refresh(first.refresh_token))).toBe('refresh_token_reused');

    const audit = await api('GET', '/api/v1/audit/logs?limit=50', { key: a.adminKey });
    const actions = (audit.body.data.entries as { action: string }[]).map((e: { action: string }) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['session.open', 'session.refresh', 'session.revoke']));
  });

  it('two concurrent uses of one refresh token never fork the family: both get the same new token (a retry), or the family is revoked', async () => {
    const t = keep(await librarySession(a.tenantId, a.adminEmail));
    const [x, y] = await Promise.all([refresh(t.refresh_token), refresh(t.refresh_token)]);
    for (const r of [x, y]) expect([200, 401], r.text).toContain(r.status);
    const won = [x, y].filter((r) => r.status === 200).map((r) => r.body.data as Tokens);
    for (const w of won) spent.push(w.refresh_token);
    expect(new Set(won.map((w) => w.refresh_token)).size).toBeLessThanOrEqual(1);
    if (won.length < 2) {
      for (const w of won) expect(await admitted(w.access_token)).toBe(false);
      expect(await admitted(t.access_token)).toBe(false);
    } else expect(await admitted(won[0]!.access_token)).toBe(true);
  });

  it('401 for an unknown refresh token, 400 for a malformed one, 403 when the account is suspended', async () => {
    const unknown = await refresh(`scr_${'A'.repeat(43)}`);
    expect(unknown.status).toBe(401);
    expect(errorCode(unknown)).toBe('unauthorized');
    const malformed = await refresh('not-a-token');
    expect(malformed.status).toBe(400);
    expect(errorCode(malformed)).toBe('validation_failed');
    expect((await api('POST', '/api/v1/auth/refresh', { body: {} })).status).toBe(400);

    const c = await newAccount('sess-susp');
    const t = keep(await librarySession(c.tenantId, c.adminEmail));
    expect((await api('PATCH', `/api/v1/admin/tenants/${c.tenantId}/suspend`, { key: rootKey() })).status).toBe(200);
    const suspended = await refresh(t.refresh_token);
    expect(suspended.status).toBe(403);
    expect(errorCode(suspended)).toBe('tenant_suspended');
  });
});

describe('POST /api/v1/auth/refresh: a forged refresh item naming another account (issue 31)', () => {
  it('401: an item naming account B and its live session, unmarked or marked by account A (what IAM lets A\'s session or the route\'s own role write), opens nothing of B', async () => {
    const { useRuntimeConfig } = await import('../helpers/in-process.js');
    useRuntimeConfig();
    const { config } = await import('../../lib/config.js');
    const { tableName } = await import('../../lib/store/client.js');
    const { keys } = await import('../../lib/store/keys.js');
    const { ownerMark } = await import('../../lib/tenancy/lookups.js');
    const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
    const { DynamoDBDocumentClient, PutCommand } = await import('@aws-sdk/lib-dynamodb');
    const { createHash, randomBytes } = await import('node:crypto');
    // a client without the owner-mark middleware of lib/store/client.ts: the table as an attacker's session writes it
    const cfg = config();
    const raw = DynamoDBDocumentClient.from(
      new DynamoDBClient({ region: cfg.AWS_REGION, endpoint: cfg.DYNAMODB_ENDPOINT, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
    );
    const victim = keep(await librarySession(b.tenantId, b.adminEmail));
    for (const mark of [{}, { [ownerMark(a.tenantId)]: true }]) {
      const forged = `scr_${randomBytes(32).toString('base64url')}`;
      const hash = createHash('sha256').update(forged, 'utf8').digest('hex');
      const item = { ...keys.refreshToken(hash), tenant_id: b.tenantId, session_id: victim.session_id, used: false, created_at: new Date().toISOString(), ...mark };
      await raw.send(new PutCommand({ TableName: tableName(), Item: item }));
      const res = await refresh(forged);
      expect(res.status, res.text).toBe(401);
      expect(errorCode(res)).toBe('unauthorized');
    }
    // the victim's own refresh token still works: nothing of its session was touched
    const own = await refresh(victim.refresh_token);
    expect(own.status, own.text).toBe(200);
    keep(own.body.data as Tokens);
  });
});

describe('POST /api/v1/auth/oidc/logout', () => {
  it('ends the session: its access token is refused on the next request, its refresh token too', async () => {
    const t = keep(await librarySession(a.tenantId, a.adminEmail));
    const other = keep(await librarySession(a.tenantId, a.adminEmail));
    const res = await api('POST', '/api/v1/auth/oidc/logout', { key: t.access_token });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({ signed_out: true, session_id: t.session_id });
    expect(await admitted(t.access_token)).toBe(false);
    expect((await refresh(t.refresh_token)).status).toBe(401);
    // another session of the same user is untouched
    expect(await admitted(other.access_token)).toBe(true);
    // signing out twice: the token is already refused
    expect((await api('POST', '/api/v1/auth/oidc/logout', { key: t.access_token })).status).toBe(401);
  });

  it('401 without credentials, 403 with an API key (no session to end), 404 for a token of no session', async () => {
    expect((await api('POST', '/api/v1/auth/oidc/logout')).status).toBe(401);
    const byKey = await api('POST', '/api/v1/auth/oidc/logout', { key: a.adminKey });
    expect(byKey.status).toBe(403);
    expect(errorCode(byKey)).toBe('forbidden');
    // a session-less access token (minted by the library) names no session of this account
    const { useRuntimeConfig } = await import('../helpers/in-process.js');
    useRuntimeConfig();
    const jwt = await import('../../lib/auth/jwt.js');
    const loose = await jwt.issueAccessToken(b.tenantId, b.adminEmail, ['secrets:read']);
    const none = await api('POST', '/api/v1/auth/oidc/logout', { key: loose });
    expect(none.status).toBe(404);
  });

  it('takes no fields: `{}` signs out as no body does; a body with a field is 400 naming it, and the session stays', async () => {
    const t = keep(await librarySession(a.tenantId, a.adminEmail));
    const refused = await api('POST', '/api/v1/auth/oidc/logout', { key: t.access_token, body: { all_sessions: true } });
    expect(refused.status, refused.text).toBe(400);
    expect(errorCode(refused)).toBe('validation_failed');
    expect(refused.text).toContain('all_sessions');
    expect(await admitted(t.access_token)).toBe(true);
    const res = await api('POST', '/api/v1/auth/oidc/logout', { key: t.access_token, body: {} });
    expect(res.status, res.text).toBe(200);
    expect(await admitted(t.access_token)).toBe(false);
  });
});

describe('GET /api/v1/admin/tenants/{id}/users', () => {
  it('lists the admin named at creation, without any verifier', async () => {
    const res = await api('GET', `/api/v1/admin/tenants/${a.tenantId}/users`, { key: rootKey() });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.users).toEqual([
      expect.objectContaining({ email: a.adminEmail, role: 'admin', scopes: ['admin:*'], source: 'admin', password: false }),
    ]);
    expect(res.body.data.users[0].last_sign_in_at).not.toBeNull();
    expect(res.text).not.toMatch(/verifier/);
  });

  it('401, 403 for a non-operator admin, 404 for an unknown account, 400 for a malformed id', async () => {
    expect((await api('GET', `/api/v1/admin/tenants/${a.tenantId}/users`)).status).toBe(401);
    const notOp = await api('GET', `/api/v1/admin/tenants/${a.tenantId}/users`, { key: a.adminKey });
    expect(notOp.status).toBe(403);
    expect(errorCode(notOp)).toBe('operator_required');
    const missing = await api('GET', '/api/v1/admin/tenants/00000000-0000-7000-8000-000000000000/users', { key: rootKey() });
    expect(missing.status).toBe(404);
    expect((await api('GET', '/api/v1/admin/tenants/nope/users', { key: rootKey() })).status).toBe(400);
  });
});

describe('GET /api/v1/diagnostics/auth', () => {
  const diag = (key: string | null, route?: string) =>
    api('GET', `/api/v1/diagnostics/auth${route ? `?route=${encodeURIComponent(route)}` : ''}`, { key });

  it('accepts a valid credential and checks it against a named route', async () => {
    const narrow = await a.key(['secrets:read']);
    const ok = await diag(narrow);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.data).toMatchObject({ accepted: true, credential: { kind: 'api_key', account_id: a.tenantId, scopes: ['secrets:read'] } });
    expect(ok.text).not.toContain(narrow);
    const route = await diag(narrow, 'POST /api/v1/secrets');
    expect(route.body.data.route).toMatchObject({ key: 'POST /api/v1/secrets', allowed: false, reason: 'insufficient_scope', missing_scopes: ['secrets:write'] });
    const op = await diag(a.adminKey, 'GET /api/v1/admin/tenants');
    expect(op.body.data.route).toMatchObject({ allowed: false, reason: 'operator_required' });
    const fine = await diag(narrow, 'GET /api/v1/secrets');
    expect(fine.body.data.route).toMatchObject({ allowed: true });
  });

  it('says why an access token is refused: expired (with when), revoked session, unknown issuer or key, bad signature', async () => {
    const { useRuntimeConfig } = await import('../helpers/in-process.js');
    useRuntimeConfig();
    const jwt = await import('../../lib/auth/jwt.js');
    const expired = await jwt.issueAccessToken(a.tenantId, a.adminEmail, ['secrets:read'], -60);
    const e = await diag(expired);
    expect(e.status).toBe(200);
    expect(e.body.data).toMatchObject({ accepted: false, reason: 'expired', credential: { kind: 'access_token' } });
    expect(Date.parse(e.body.data.expired_at)).toBeLessThan(Date.now());
    expect(e.text).not.toContain(expired);

    const t = keep(await librarySession(a.tenantId, a.adminEmail));
    expect((await diag(t.access_token)).body.data).toMatchObject({ accepted: true, credential: { kind: 'access_token', id: t.session_id } });
    await api('POST', '/api/v1/auth/oidc/logout', { key: t.access_token });
    expect((await diag(t.access_token)).body.data).toMatchObject({ accepted: false, reason: 'session_revoked' });

    const [h, p, s] = t.access_token.split('.');
    const claims = JSON.parse(Buffer.from(p!, 'base64url').toString());
    const tampered = [h, Buffer.from(JSON.stringify({ ...claims, scope: 'admin:* more' })).toString('base64url'), s].join('.');
    expect((await diag(tampered)).body.data.reason).toBe('invalid_signature');
    const { privateKey } = await generateKeyPair('ES256');
    const header = JSON.parse(Buffer.from(h!, 'base64url').toString());
    const foreignIss = await new SignJWT({ ...claims, iss: 'https://elsewhere.example' }).setProtectedHeader(header).sign(privateKey);
    const fi = await diag(foreignIss);
    expect(fi.body.data.reason).toBe('unknown_issuer');
    // another account's id in a token this service did not sign: nothing about that account is told
    const probe = await new SignJWT({ ...claims, tid: b.tenantId }).setProtectedHeader({ ...header, kid: 'guess' }).sign(privateKey);
    const pr = await diag(probe);
    expect(pr.body.data).toEqual({ accepted: false, credential: { kind: 'access_token' }, reason: 'unknown_key', explanation: expect.any(String) });
    expect(pr.text).not.toContain(b.tenantId);
  });

  it('tokens signed with the account\u2019s own key but wrong: audience, issuer claim, algorithm, kid, sid, scope, ended session', async () => {
    const { useRuntimeConfig } = await import('../helpers/in-process.js');
    useRuntimeConfig();
    const { db, tableName } = await import('../../lib/store/client.js');
    const { keys } = await import('../../lib/store/keys.js');
    const { queryFirst } = await import('../../lib/store/pagination.js');
    const { openJson } = await import('../../lib/crypto/envelope.js');
    const { UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
    const { importJWK } = await import('jose');
    const t = keep(await librarySession(a.tenantId, a.adminEmail));
    const item = (await queryFirst({ pk: keys.tenant(a.tenantId).pk, sk: { prefix: keys.tokenKeyPrefix }, newestFirst: true }))!;
    const kid = item.kid as string;
    const key = await importJWK(await openJson<JWK>({ tenantId: a.tenantId, type: 'token_key', id: kid, version: 1 }, item.private as Uint8Array), 'ES256');
    const claims = JSON.parse(Buffer.from(t.access_token.split('.')[1]!, 'base64url').toString());
    const sign = (c: Record<string, unknown>, h: Record<string, unknown> = {}) =>
      new SignJWT(c).setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt', ...h } as { alg: string }).sign(key);
    const reason = async (token: string) => (await diag(token)).body.data.reason;
    expect(await reason(await sign({ ...claims, aud: 'someone-else' }))).toBe('wrong_audience');
    expect(await reason(await sign({ ...claims, sid: 'not-a-uuid' }))).toBe('malformed');
    expect(await reason(await sign({ ...claims, scope: undefined }))).toBe('invalid_claims');
    expect(await reason(await sign({ ...claims }, { typ: 'JWT' }))).toBe('invalid_claims');
    expect(await reason(await sign({ ...claims }, { kid: undefined }))).toBe('unknown_key');
    const hs = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid }).sign(new Uint8Array(32));
    expect(await reason(hs)).toBe('unsupported_algorithm');
    expect(await reason('eyJub3QiOiJqc29uIn0.e30.c2ln')).toBe('unknown_issuer');
    expect(await reason('eyJ.eyJ.x')).toBe('malformed');
    // a session past its end: its tokens are refused as such
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.session(a.tenantId, t.session_id),
        UpdateExpression: 'SET expires_at = :past',
        ExpressionAttributeValues: { ':past': new Date(Date.now() - 1000).toISOString() },
      }),
    );
    expect(await reason(t.access_token)).toBe('session_expired');
    expect(await admitted(t.access_token)).toBe(false);
    expect((await refresh(t.refresh_token)).status).toBe(401);
  });

  it('refuses unknown API keys without telling which account', async () => {
    const res = await diag(`scm_abcdefgh_${'x'.repeat(43)}`);
    expect(res.body.data).toMatchObject({ accepted: false, reason: 'unknown_credential', credential: { kind: 'api_key' } });
    expect(res.body.data.credential.account_id).toBeUndefined();
  });

  it('no credential: says so (200, nothing to refuse); 400 for an unknown route', async () => {
    const none = await diag(null);
    expect(none.status).toBe(200);
    expect(none.body.data).toMatchObject({ accepted: false, reason: 'missing_credentials' });
    const header = await api('GET', '/api/v1/diagnostics/auth', { headers: { authorization: 'Basic abc' } });
    expect(header.body.data).toMatchObject({ accepted: false, reason: 'malformed_header' });
    const bad = await diag(a.adminKey, 'GET /api/v1/nothing-here');
    expect(bad.status).toBe(400);
    expect(errorCode(bad)).toBe('bad_request');
  });
});

afterAll(async () => {
  const leaks = await findLeaks({
    dynamoEndpoint: inject('dynamoEndpoint'),
    tableName: inject('tableName'),
    logText: readFileSync(inject('logFile'), 'utf8'),
    extra: spent,
  });
  expect(leaks).toEqual([]);
});

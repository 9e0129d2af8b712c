import { createHash } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { api, baseUrl, newAccount, oauthError, type TestAccount } from '../helpers/api.js';
import { admitted, librarySession, refresh } from './sign-in.helpers.js';

/**
 * CLI login (lib/users/cli-login.ts): GET /auth/cli/login starts an RFC 8628 device
 * authorization; the person approves from the sign-in page with their session token
 * (GET /auth/cli/login?user_code=…&decision=…); POST /auth/cli/token polls and, once
 * approved, hands out a new session of that person; POST /auth/cli/revoke (RFC 7009) ends it.
 */
const GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
let a: TestAccount;
let b: TestAccount;

const table = () =>
  DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint: inject('dynamoEndpoint'), region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
  );

interface Start {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

async function start(query = 'client_id=secrets-cli&name=laptop'): Promise<Start> {
  const res = await api('GET', `/api/v1/auth/cli/login?${query}`);
  expect(res.status, res.text).toBe(200);
  expect(res.headers.get('cache-control')).toBe('no-store');
  return res.body as Start;
}

/** A form-encoded poll, as an RFC 8628 client sends it. */
const poll = (device_code: string, extra: Record<string, string> = {}) =>
  api('POST', '/api/v1/auth/cli/token', {
    rawBody: new URLSearchParams({ grant_type: GRANT, device_code, client_id: 'secrets-cli', ...extra }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });

const decide = (userCode: string, token: string | null, decision?: 'approve' | 'deny') =>
  api('GET', `/api/v1/auth/cli/login?user_code=${encodeURIComponent(userCode)}${decision ? `&decision=${decision}` : ''}`, { key: token });

const revoke = (token: string) =>
  api('POST', '/api/v1/auth/cli/revoke', {
    rawBody: new URLSearchParams({ token }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });

beforeAll(async () => {
  [a, b] = await Promise.all([newAccount('cli'), newAccount('cli-b')]);
});

describe('GET /api/v1/auth/cli/login', () => {
  it('starts a login: the RFC 8628 device authorization response, pointing at the sign-in page with the code', async () => {
    const s = await start();
    expect(s.device_code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(s.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(s.verification_uri).toBe(`${baseUrl()}/api/v1/auth/oidc/login`);
    expect(s.verification_uri_complete).toBe(`${s.verification_uri}?user_code=${s.user_code}`);
    expect([s.expires_in, s.interval]).toEqual([600, 5]);
    // the page it points to serves the approval form and takes the code from its own URL
    const page = await fetch(s.verification_uri_complete);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('id="cli-approve"');
    expect(html).toContain("get('user_code')");
  });

  it('reviews and decides only with a sign-in session: 401 without, 403 with an API key, 404 for unknown codes', async () => {
    const s = await start();
    const anonymous = await decide(s.user_code, null, 'approve');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error).toBe('invalid_client');
    const withKey = await decide(s.user_code, a.adminKey, 'approve');
    expect(withKey.status).toBe(403);
    expect(withKey.body.error_description).toMatch(/sign-in session/);
    const session = await librarySession(a.tenantId, a.adminEmail);
    const review = await decide(s.user_code.toLowerCase().replace('-', ' '), session.access_token);
    expect(review.status, review.text).toBe(200);
    expect(review.body).toMatchObject({ user_code: s.user_code, status: 'pending', client_id: 'secrets-cli', name: 'laptop' });
    const unknown = await decide('BCDF-GHJK', session.access_token, 'approve');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error_description).toMatch(/run the login again/);
    expect((await decide('not a code', session.access_token)).status).toBe(404);
  });

  it('400 for a decision without a code, a code with start parameters, or unknown parameters', async () => {
    const none = await api('GET', '/api/v1/auth/cli/login?decision=approve');
    expect(none.status).toBe(400);
    expect(none.body.error).toBe('invalid_request');
    expect((await api('GET', '/api/v1/auth/cli/login?user_code=BCDF-GHJK&client_id=x')).status).toBe(400);
    expect((await api('GET', '/api/v1/auth/cli/login?decision=maybe&user_code=BCDF-GHJK')).status).toBe(400);
    expect((await api('GET', '/api/v1/auth/cli/login?scope=all')).status).toBe(400);
  });
});

describe('POST /api/v1/auth/cli/token', () => {
  it('pending, slow_down, then once approved a session of the approver (answered once); the user code is spent', async () => {
    const s = await start();
    const first = await poll(s.device_code);
    expect(first.status).toBe(400);
    expect(oauthError(first)).toBe('authorization_pending');
    expect(first.headers.get('cache-control')).toBe('no-store');
    const fast = await poll(s.device_code);
    expect(oauthError(fast)).toBe('slow_down');
    expect(fast.body.error_description).toMatch(/wait at least 10 s/);

    const approver = await librarySession(a.tenantId, a.adminEmail);
    const approved = await decide(s.user_code, approver.access_token, 'approve');
    expect(approved.status, approved.text).toBe(200);
    expect(approved.body.status).toBe('approved');
    // single-use: the code names nothing any more
    expect((await decide(s.user_code, approver.access_token)).status).toBe(404);

    const issued = await poll(s.device_code);
    expect(issued.status, issued.text).toBe(200);
    expect(issued.body).toMatchObject({ token_type: 'Bearer', expires_in: 900, scope: 'admin:*' });
    expect(issued.body.refresh_token).toMatch(/^scr_/);
    expect(issued.body.session_id).not.toBe(approver.session_id);
    expect(await admitted(issued.body.access_token)).toBe(true);
    const who = await api('GET', '/api/v1/secrets', { key: issued.body.access_token });
    expect(who.status).toBe(200);
    // the session is the approver's, in the approver's account, opened by method cli
    const item = await table().send(
      new GetCommand({ TableName: inject('tableName'), Key: { pk: `T#${a.tenantId}`, sk: `SESSION#${issued.body.session_id}` } }),
    );
    expect(item.Item).toMatchObject({ user: a.adminEmail, method: 'cli', status: 'active' });
    // answered once
    expect(oauthError(await poll(s.device_code))).toBe('invalid_grant');
    // its refresh token rotates like any session's
    const next = await refresh(issued.body.refresh_token);
    expect(next.status, next.text).toBe(200);
  });

  it('denied, expired, another client, unknown: the RFC errors', async () => {
    const denied = await start();
    const approver = await librarySession(b.tenantId, b.adminEmail);
    expect((await decide(denied.user_code, approver.access_token, 'deny')).body.status).toBe('denied');
    expect(oauthError(await poll(denied.device_code))).toBe('access_denied');

    const expired = await start();
    await table().send(
      new UpdateCommand({
        TableName: inject('tableName'),
        Key: { pk: `CLILOGIN#${createHash('sha256').update(expired.device_code).digest('hex')}`, sk: 'CLILOGIN' },
        UpdateExpression: 'SET expires_at = :past',
        ExpressionAttributeValues: { ':past': Math.floor(Date.now() / 1000) - 1 },
      }),
    );
    expect(oauthError(await poll(expired.device_code))).toBe('expired_token');
    expect((await decide(expired.user_code, approver.access_token, 'approve')).status).toBe(404);

    const other = await start();
    expect(oauthError(await poll(other.device_code, { client_id: 'someone-else' }))).toBe('invalid_grant');
    expect(oauthError(await poll('x'.repeat(43)))).toBe('invalid_grant');
  });

  it('400 invalid_request / unsupported_grant_type for malformed polls', async () => {
    const s = await start();
    expect(oauthError(await poll(s.device_code, { grant_type: 'password' }))).toBe('unsupported_grant_type');
    const missing = await api('POST', '/api/v1/auth/cli/token', { body: { device_code: s.device_code } });
    expect(missing.status).toBe(400);
    expect(oauthError(missing)).toBe('invalid_request');
    expect(oauthError(await api('POST', '/api/v1/auth/cli/token', { body: { grant_type: GRANT } }))).toBe('invalid_request');
  });

  it('a login approved in account B never yields a session of account A (cross-account)', async () => {
    const s = await start();
    const approverB = await librarySession(b.tenantId, b.adminEmail);
    expect((await decide(s.user_code, approverB.access_token, 'approve')).status).toBe(200);
    const issued = await poll(s.device_code);
    expect(issued.status).toBe(200);
    const claims = JSON.parse(Buffer.from(issued.body.access_token.split('.')[1], 'base64url').toString());
    expect(claims.tid).toBe(b.tenantId);
    expect(claims.sub).toBe(b.adminEmail);
    // A's secrets are not B's: a secret of A is a 404 for the CLI session of B
    const name = `cli-x-${Date.now()}`;
    expect((await api('POST', '/api/v1/secrets', { key: a.adminKey, body: { name, data: { value: 'a-only' } } })).status).toBe(201);
    expect((await api('GET', `/api/v1/secrets/${name}`, { key: issued.body.access_token })).status).toBe(404);
  });
});

describe('POST /api/v1/auth/cli/token: a forged login naming another account (issue 31)', () => {
  it("invalid_grant: an approved login naming account B, unmarked or marked by account A (what A's session or the start and poll routes' own roles can write), yields no session of B", async () => {
    for (const mark of [{}, { [`T#${a.tenantId}`]: true }]) {
      const s = await start();
      // the pending login, turned into an approval by B's admin without B's session (a raw write, as an attacker's role could)
      await table().send(
        new UpdateCommand({
          TableName: inject('tableName'),
          Key: { pk: `CLILOGIN#${createHash('sha256').update(s.device_code).digest('hex')}`, sk: 'CLILOGIN' },
          UpdateExpression: `SET #s = :approved, tenant_id = :b, #u = :user, decided_at = :at${Object.keys(mark).length ? ', #m = :t' : ''}`,
          ExpressionAttributeNames: { '#s': 'status', '#u': 'user', ...(Object.keys(mark).length ? { '#m': Object.keys(mark)[0]! } : {}) },
          ExpressionAttributeValues: {
            ':approved': 'approved',
            ':b': b.tenantId,
            ':user': b.adminEmail,
            ':at': new Date().toISOString(),
            ...(Object.keys(mark).length ? { ':t': true } : {}),
          },
        }),
      );
      const res = await poll(s.device_code);
      expect(res.status, res.text).toBe(400);
      expect(oauthError(res)).toBe('invalid_grant');
      expect(JSON.stringify(res.body)).not.toContain('access_token');
    }
  });
});

describe('POST /api/v1/auth/cli/revoke', () => {
  async function cliSession() {
    const s = await start();
    const approver = await librarySession(a.tenantId, a.adminEmail);
    expect((await decide(s.user_code, approver.access_token, 'approve')).status).toBe(200);
    const issued = await poll(s.device_code);
    expect(issued.status).toBe(200);
    return issued.body as { access_token: string; refresh_token: string; session_id: string };
  }

  it('the refresh token ends the whole session: its access token is refused on the next request', async () => {
    const t = await cliSession();
    const res = await revoke(t.refresh_token);
    expect(res.status, res.text).toBe(200);
    expect(res.text).toBe('');
    expect(await admitted(t.access_token)).toBe(false);
    expect((await refresh(t.refresh_token)).status).toBe(401);
    const item = await table().send(
      new GetCommand({ TableName: inject('tableName'), Key: { pk: `T#${a.tenantId}`, sk: `SESSION#${t.session_id}` } }),
    );
    expect(item.Item).toMatchObject({ status: 'revoked', revoked_reason: 'token_revocation' });
  });

  it('the access token ends it too (JSON body accepted)', async () => {
    const t = await cliSession();
    const res = await api('POST', '/api/v1/auth/cli/revoke', { body: { token: t.access_token, token_type_hint: 'access_token' } });
    expect(res.status).toBe(200);
    expect(await admitted(t.access_token)).toBe(false);
  });

  it('200 for unknown, already revoked and foreign-looking tokens (RFC 7009 §2.2); 400 without a token', async () => {
    const t = await cliSession();
    expect((await revoke(t.refresh_token)).status).toBe(200);
    expect((await revoke(t.refresh_token)).status).toBe(200);
    expect((await revoke(`scr_${'A'.repeat(43)}`)).status).toBe(200);
    expect((await revoke('eyJhbGciOiJFUzI1NiJ9.e30.c2ln')).status).toBe(200);
    expect((await revoke(a.adminKey)).status).toBe(200);
    // an API key is not a session: it still works
    expect((await api('GET', '/api/v1/secrets', { key: a.adminKey })).status).toBe(200);
    const missing = await api('POST', '/api/v1/auth/cli/revoke', { body: {} });
    expect(missing.status).toBe(400);
    expect(oauthError(missing)).toBe('invalid_request');
  });
});

import { createHash, randomBytes } from 'node:crypto';
import { createRemoteJWKSet, decodeProtectedHeader, importJWK, jwtVerify, SignJWT, type JWK } from 'jose';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api, baseUrl, newAccount, oauthError, unique, type TestAccount } from '../helpers/api.js';
import { findLeaks } from '../helpers/leaks.js';
import { librarySession } from './sign-in.helpers.js';

/**
 * The authorization server against an attacker (issue 32): its own public key set (a token
 * a user signs with an exported jwt-signing key never verifies against it), authorization
 * code replay (RFC 6749 §4.1.2: the second exchange fails and revokes what the first one
 * issued), and refresh retries after a lost answer. The person's step is plain HTTP: the
 * session cookie the sign-in routes set, the consent form's ticket, the 302 to the client.
 */
const REDIRECT = 'https://client.example.test/cb';
let a: TestAccount;
let secretName: string;
const exported: string[] = [];
const issuer = () => `${baseUrl()}/api/v1/auth/oauth`;
const table = () =>
  DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint: inject('dynamoEndpoint'), region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
  );

function form(path: string, params: Record<string, string>, headers: Record<string, string> = {}) {
  return api('POST', path, { rawBody: new URLSearchParams(params).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers } });
}
const basic = (id: string, s: string) => ({ authorization: `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(s)}`).toString('base64')}` });

interface Client {
  id: string;
  secret: string;
}

async function newClient(grants: string[]): Promise<Client> {
  const res = await api('POST', '/api/v1/oidc/clients', {
    key: a.adminKey,
    body: { name: unique('app'), grant_types: grants, redirect_uris: [REDIRECT], scopes: ['secrets:read'] },
  });
  expect(res.status, res.text).toBe(201);
  exported.push(res.body.data.client_secret);
  return { id: res.body.data.client.client_id, secret: res.body.data.client_secret };
}

/** The person's step without a browser: the session cookie, the consent form's ticket, the redirect's code. */
async function authorizationCode(c: Client): Promise<{ code: string; verifier: string }> {
  const session = await librarySession(a.tenantId, a.adminEmail);
  exported.push(session.access_token, session.refresh_token);
  const verifier = randomBytes(32).toString('base64url');
  const params = new URLSearchParams({
    response_type: 'code',
    client_id: c.id,
    redirect_uri: REDIRECT,
    scope: 'secrets:read',
    state: 'st',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  });
  const headers = { cookie: `sc_session=${session.access_token}` };
  let res = await fetch(`${issuer()}/authorize?${params}`, { headers, redirect: 'manual' });
  if (res.status === 200) {
    const ticket = /name="ticket" value="([^"]+)"/.exec(await res.text())?.[1];
    expect(ticket).toBeDefined();
    res = await fetch(`${issuer()}/authorize?${params}&ticket=${ticket}&decision=allow`, { headers, redirect: 'manual' });
  }
  expect(res.status).toBe(302);
  const code = new URL(res.headers.get('location')!).searchParams.get('code');
  expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
  return { code: code!, verifier };
}

const redeem = (c: Client, code: { code: string; verifier: string }) =>
  form('/api/v1/auth/oauth/token', { grant_type: 'authorization_code', code: code.code, redirect_uri: REDIRECT, code_verifier: code.verifier }, basic(c.id, c.secret));

const readsSecret = async (token: string) => (await api('GET', `/api/v1/secrets/${secretName}`, { key: token })).status;

beforeAll(async () => {
  a = await newAccount('oauth-grants');
  secretName = unique('db');
  const made = await api('POST', '/api/v1/secrets', { key: a.adminKey, body: { name: secretName, data: { value: 'x' } } });
  expect(made.status, made.text).toBe(201);
});

afterAll(async () => {
  const leaks = await findLeaks({ dynamoEndpoint: inject('dynamoEndpoint'), tableName: inject('tableName'), logText: '', extra: exported });
  expect(leaks).toEqual([]);
});

describe('the authorization server\u2019s own key set (discovery jwks_uri)', () => {
  it('is public and standard; an access token of the server verifies against it, a JWT signed with a user-exported jwt-signing key does not', async () => {
    const meta = await api('GET', '/api/v1/auth/oauth/.well-known/openid-configuration');
    expect(meta.status, meta.text).toBe(200);
    const jwksUri = meta.body.jwks_uri as string;
    expect(jwksUri).toBe(`${issuer()}/jwks`);

    // a user with credentials:write and export:read makes and exports a jwt-signing key, and signs an admin token with it
    const [writer, exporter] = await Promise.all([a.key(['credentials:write']), a.key(['credentials:write', 'export:read'])]);
    const gen = await api('POST', '/api/v1/keys/jwt-signing/generate', { key: writer, body: { name: unique('forge'), algorithm: 'ES256' } });
    expect(gen.status, gen.text).toBe(201);
    const { id, kid } = gen.body.data.key as { id: string; kid: string };
    const full = await api('GET', `/api/v1/keys/jwt-signing/${id}?include_private=true`, { key: exporter });
    expect(full.status, full.text).toBe(200);
    const jwk = full.body.data.key.private.private_jwk as JWK;
    exported.push(jwk.d!);
    const forged = await new SignJWT({ tid: a.tenantId, scope: 'admin:*' })
      .setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt' })
      .setIssuer('secrets-api')
      .setAudience('secrets-api')
      .setSubject(a.adminEmail)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(await importJWK(jwk, 'ES256'));

    // a real access token of the authorization server (client_credentials)
    const c = await newClient(['client_credentials']);
    const issued = await form('/api/v1/auth/oauth/token', { grant_type: 'client_credentials', scope: 'secrets:read' }, basic(c.id, c.secret));
    expect(issued.status, issued.text).toBe(200);
    const accessToken = issued.body.access_token as string;
    exported.push(accessToken);

    // the token endpoint works in the client's account's tenant session, which may name no platform
    // listing: an account's very first token-signing key, made there, joins the set when the stream
    // relay lists it from its insert (lib/events/platform-listings.ts listTokenKey), seconds later
    const issuedKid = decodeProtectedHeader(accessToken).kid!;
    const listedKids = async () => ((await (await fetch(jwksUri)).json()) as { keys: JWK[] }).keys.map((k) => k.kid);
    for (let i = 0; i < 100 && !(await listedKids()).includes(issuedKid); i++) await new Promise((ok) => setTimeout(ok, 200));
    // no credential needed: jose fetches the set as a resource server would
    const remote = createRemoteJWKSet(new URL(jwksUri));
    const { payload } = await jwtVerify(accessToken, remote);
    expect(payload.tid).toBe(a.tenantId);
    await expect(jwtVerify(forged, remote)).rejects.toMatchObject({ code: 'ERR_JWKS_NO_MATCHING_KEY' });

    const res = await fetch(jwksUri);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/jwk-set+json');
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    const set = (await res.json()) as { keys: JWK[] };
    expect(Object.keys(set)).toEqual(['keys']);
    const kids = set.keys.map((k) => k.kid);
    expect(kids).toContain(decodeProtectedHeader(accessToken).kid);
    expect(kids).not.toContain(kid);
    for (const k of set.keys) expect(Object.keys(k).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
    expect(res.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    // a matching If-None-Match gets 304 (other files' new accounts may add a key between two reads: then the ETag moved with the set)
    let revalidated = 0;
    for (let i = 0; i < 5 && revalidated !== 304; i++) {
      const etag = (await fetch(jwksUri)).headers.get('etag')!;
      const again = await fetch(jwksUri, { headers: { 'if-none-match': etag } });
      revalidated = again.status;
      if (revalidated !== 304) expect(again.headers.get('etag')).not.toBe(etag);
    }
    expect(revalidated).toBe(304);

    // the contract's account set is unchanged: bearer-protected, and it holds the account's jwt-signing key
    expect((await fetch(`${baseUrl()}/api/v1/.well-known/jwks.json`)).status).toBe(401);
    const account = await api('GET', '/api/v1/.well-known/jwks.json', { key: writer });
    expect(account.status).toBe(200);
    expect((account.body.keys as JWK[]).map((k) => k.kid)).toContain(kid);
  });

  it('a token-signing key written before the set existed joins it when it next signs', async () => {
    const b = await newAccount('oauth-grants-old');
    const first = await librarySession(b.tenantId, b.adminEmail);
    exported.push(first.access_token, first.refresh_token);
    const kid = decodeProtectedHeader(first.access_token).kid!;
    const kids = async () => ((await (await fetch(`${issuer()}/jwks`)).json()) as { keys: JWK[] }).keys.map((k) => k.kid);
    expect(await kids()).toContain(kid);
    // as the key item of an earlier release: not in the listing
    await table().send(
      new UpdateCommand({ TableName: inject('tableName'), Key: { pk: `T#${b.tenantId}`, sk: `TOKENKEY#${kid}` }, UpdateExpression: 'REMOVE platpk, platsk' }),
    );
    expect(await kids()).not.toContain(kid);
    const next = await librarySession(b.tenantId, b.adminEmail);
    exported.push(next.access_token, next.refresh_token);
    expect(decodeProtectedHeader(next.access_token).kid).toBe(kid);
    expect(await kids()).toContain(kid);
  });
});

describe('a forged authorization code naming another account (issue 31)', () => {
  it('invalid_grant: a code item naming the client\'s account, unmarked or marked by another account (what that account\'s session or a route\'s own role can write), mints nothing', async () => {
    const c = await newClient(['authorization_code']);
    const other = await newAccount('oauth-grants-forger');
    for (const mark of [{}, { [`T#${other.tenantId}`]: true }]) {
      const code = randomBytes(32).toString('base64url');
      const verifier = randomBytes(32).toString('base64url');
      await table().send(
        new PutCommand({
          TableName: inject('tableName'),
          Item: {
            pk: `OAUTHCODE#${createHash('sha256').update(code).digest('hex')}`,
            sk: 'OAUTHCODE',
            tenant_id: a.tenantId,
            client_id: c.id,
            user: a.adminEmail,
            scopes: ['secrets:read'],
            code_challenge: createHash('sha256').update(verifier).digest('base64url'),
            redirect_uri: REDIRECT,
            expires_at: new Date(Date.now() + 60_000).toISOString(),
            ...mark,
          },
        }),
      );
      const res = await redeem(c, { code, verifier });
      expect(res.status, res.text).toBe(400);
      expect(oauthError(res)).toBe('invalid_grant');
      expect(res.body.access_token).toBeUndefined();
    }
  });
});

describe('authorization code replay (RFC 6749 §4.1.2)', () => {
  it('a second exchange of a code fails and revokes the tokens the first one issued, whoever presents it', async () => {
    const c = await newClient(['authorization_code', 'refresh_token']);
    const code = await authorizationCode(c);
    const first = await redeem(c, code);
    expect(first.status, first.text).toBe(200);
    const { access_token, refresh_token } = first.body as { access_token: string; refresh_token: string };
    exported.push(access_token, refresh_token);
    expect(await readsSecret(access_token)).toBe(200);

    const second = await redeem(c, code);
    expect(second.status, second.text).toBe(400);
    expect(oauthError(second)).toBe('invalid_grant');
    expect(second.body.error_description).toContain('already used');
    expect(second.text).not.toContain('access_token');
    // the first exchange's tokens: the access token is refused at the API, the refresh token at the token endpoint
    expect(await readsSecret(access_token)).toBe(401);
    const refreshed = await form('/api/v1/auth/oauth/token', { grant_type: 'refresh_token', refresh_token }, basic(c.id, c.secret));
    expect(refreshed.status).toBe(400);
    expect(oauthError(refreshed)).toBe('invalid_grant');
    expect((await redeem(c, code)).status).toBe(400);

    // an attacker's client of the same account replaying a code it intercepted: refused, and the grant revoked too
    const other = await newClient(['authorization_code']);
    const code2 = await authorizationCode(c);
    const legit = await redeem(c, code2);
    expect(legit.status, legit.text).toBe(200);
    exported.push(legit.body.access_token, legit.body.refresh_token);
    const stolen = await redeem(other, code2);
    expect(stolen.status).toBe(400);
    expect(oauthError(stolen)).toBe('invalid_grant');
    expect(await readsSecret(legit.body.access_token)).toBe(401);
  });
});

describe('refresh retried after a lost answer', () => {
  const refreshAt = (c: Client, token: string) => form('/api/v1/auth/oauth/token', { grant_type: 'refresh_token', refresh_token: token }, basic(c.id, c.secret));
  const refreshItem = (token: string) => ({ pk: `REFRESH#${createHash('sha256').update(token, 'utf8').digest('hex')}`, sk: 'REFRESH' });

  async function grant(c: Client) {
    const res = await redeem(c, await authorizationCode(c));
    expect(res.status, res.text).toBe(200);
    exported.push(res.body.access_token, res.body.refresh_token);
    return res.body as { access_token: string; refresh_token: string };
  }

  it('the same client within the retry window gets the same new refresh token, and the session goes on', async () => {
    const c = await newClient(['authorization_code', 'refresh_token']);
    const t = await grant(c);
    const r1 = await refreshAt(c, t.refresh_token);
    expect(r1.status, r1.text).toBe(200);
    exported.push(r1.body.access_token, r1.body.refresh_token);
    // the answer was lost: the client retries with the token it still holds
    const r2 = await refreshAt(c, t.refresh_token);
    expect(r2.status, r2.text).toBe(200);
    exported.push(r2.body.access_token);
    expect(r2.body.refresh_token).toBe(r1.body.refresh_token);
    expect(r2.body.scope).toBe(r1.body.scope);
    expect(await readsSecret(r2.body.access_token)).toBe(200);
    expect(await readsSecret(r1.body.access_token)).toBe(200);
    // the chain goes on from the one new token
    const r3 = await refreshAt(c, r2.body.refresh_token);
    expect(r3.status, r3.text).toBe(200);
    exported.push(r3.body.access_token, r3.body.refresh_token);
    // once the new token is used, the old one is a replay again: refused, and the family revoked
    const replay = await refreshAt(c, t.refresh_token);
    expect(replay.status).toBe(400);
    expect(oauthError(replay)).toBe('invalid_grant');
    expect(await readsSecret(r3.body.access_token)).toBe(401);
  });

  it('after the retry window, or from another client, a used refresh token still revokes the family', async () => {
    const c = await newClient(['authorization_code', 'refresh_token']);
    const late = await grant(c);
    const r1 = await refreshAt(c, late.refresh_token);
    expect(r1.status, r1.text).toBe(200);
    exported.push(r1.body.access_token, r1.body.refresh_token);
    // the first use was longer ago than the window
    await table().send(
      new UpdateCommand({
        TableName: inject('tableName'),
        Key: refreshItem(late.refresh_token),
        UpdateExpression: 'SET used_at = :at',
        ExpressionAttributeValues: { ':at': new Date(Date.now() - 60_000).toISOString() },
      }),
    );
    const stale = await refreshAt(c, late.refresh_token);
    expect(stale.status).toBe(400);
    expect(oauthError(stale)).toBe('invalid_grant');
    expect(await readsSecret(r1.body.access_token)).toBe(401);

    // another client of the account presenting the used token within the window
    const other = await newClient(['refresh_token', 'client_credentials']);
    const t = await grant(c);
    const s1 = await refreshAt(c, t.refresh_token);
    expect(s1.status, s1.text).toBe(200);
    exported.push(s1.body.access_token, s1.body.refresh_token);
    const foreign = await refreshAt(other, t.refresh_token);
    expect(foreign.status).toBe(400);
    expect(oauthError(foreign)).toBe('invalid_grant');
    expect(foreign.text).not.toContain(s1.body.refresh_token);
    expect(await readsSecret(s1.body.access_token)).toBe(401);
    expect((await refreshAt(c, s1.body.refresh_token)).status).toBe(400);
  });
});

describe('what off-the-shelf clients send (issue 33)', () => {
  it('/authorize ignores parameters it does not know: prompt, response_mode, login_hint, resource (RFC 6749 §3.1)', async () => {
    const c = await newClient(['authorization_code']);
    const session = await librarySession(a.tenantId, a.adminEmail);
    exported.push(session.access_token, session.refresh_token);
    const params = new URLSearchParams({
      response_type: 'code',
      client_id: c.id,
      redirect_uri: REDIRECT,
      scope: 'secrets:read',
      state: 'st',
      code_challenge: createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url'),
      code_challenge_method: 'S256',
      prompt: 'consent',
      response_mode: 'query',
      login_hint: a.adminEmail,
      resource: baseUrl(),
    });
    const res = await fetch(`${issuer()}/authorize?${params}`, { headers: { cookie: `sc_session=${session.access_token}` }, redirect: 'manual' });
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain('name="ticket"');
    // the consent form carries only what the server understood
    expect(page).not.toContain('login_hint');
    // without a session: the sign-in page, not a 400
    expect((await fetch(`${issuer()}/authorize?${params}`, { redirect: 'manual' })).status).toBe(200);
  });

  it('revocation ignores a token_type_hint it does not know (RFC 7009 §2.1) and still ends the session', async () => {
    const t = await librarySession(a.tenantId, a.adminEmail);
    exported.push(t.access_token, t.refresh_token);
    expect(await readsSecret(t.access_token)).toBe(200);
    const res = await form('/api/v1/auth/cli/revoke', { token: t.refresh_token, token_type_hint: 'urn:example:unknown-hint' });
    expect(res.status, res.text).toBe(200);
    expect(await readsSecret(t.access_token)).toBe(401);
  });

  it('device authorization by POST, form-encoded, as RFC 8628 §3.1 sends it (scope and unknown parameters ignored); the CLI then polls', async () => {
    const res = await form('/api/v1/auth/cli/login', { client_id: 'secrets-cli', scope: 'openid secrets:read', audience: 'ignored' });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('cache-control')).toContain('no-store');
    expect(res.body).not.toHaveProperty('success');
    expect(res.body).toMatchObject({ verification_uri: `${baseUrl()}/api/v1/auth/oidc/login`, expires_in: 600, interval: 5 });
    expect(res.body.device_code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(res.body.verification_uri_complete).toBe(`${res.body.verification_uri}?user_code=${res.body.user_code}`);
    const poll = await form('/api/v1/auth/cli/token', {
      grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
      device_code: res.body.device_code,
      client_id: 'secrets-cli',
    });
    expect(poll.status).toBe(400);
    expect(oauthError(poll)).toBe('authorization_pending');
    // the contract's GET start is unchanged
    expect((await api('GET', '/api/v1/auth/cli/login?client_id=secrets-cli')).status).toBe(200);
  });
});

import { createHash, randomBytes } from 'node:crypto';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, jwtVerify, SignJWT } from 'jose';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api, baseUrl, newAccount, oauthError, unique, type TestAccount } from '../helpers/api.js';
import { findLeaks } from '../helpers/leaks.js';
import { librarySession } from './sign-in.helpers.js';

/**
 * The authorization server as an OpenID provider (issue 33), driven by two clients this
 * project does not contain, each on its own: openid-client v6 and oauth4webapi v3. Each
 * discovers the server, runs the authorization code flow with PKCE and `openid` (the person's
 * step through the API as oauth-grants.test.ts does: the sign-in cookie, the consent ticket,
 * the 302), validates the ID token, calls userinfo, refreshes, introspects (RFC 7662) and
 * revokes (RFC 7009); client_credentials with client_secret_basic, client_secret_post and
 * private_key_jwt; a public client (none) with PKCE; RFC 9068 access tokens checked by
 * oauth4webapi's validateJwtAccessToken; RP-initiated logout; oauth4webapi's RFC 8628
 * device authorization request as it sends it.
 */
const REDIRECT = 'https://rp.example.test/cb';
let a: TestAccount;
let b: TestAccount;
let secretName: string;
const exported: string[] = [];
const issuer = () => `${baseUrl()}/api/v1/auth/oauth`;

async function newClient(acct: TestAccount, body: Record<string, unknown>) {
  const res = await api('POST', '/api/v1/oidc/clients', { key: acct.adminKey, body: { name: unique('rp'), ...body } });
  expect(res.status, res.text).toBe(201);
  if (res.body.data.client_secret) exported.push(res.body.data.client_secret);
  return { id: res.body.data.client.client_id as string, secret: res.body.data.client_secret as string | null };
}

/** The person's step without a browser: the sign-in cookie, the consent form's ticket; the URL the browser would come back to. */
async function approve(authorizationUrl: URL, acct = a): Promise<URL> {
  const session = await librarySession(acct.tenantId, acct.adminEmail);
  exported.push(session.access_token, session.refresh_token);
  const headers = { cookie: `sc_session=${session.access_token}` };
  let res = await fetch(authorizationUrl, { headers, redirect: 'manual' });
  if (res.status === 200) {
    const ticket = /name="ticket" value="([^"]+)"/.exec(await res.text())?.[1];
    expect(ticket).toBeDefined();
    res = await fetch(`${authorizationUrl.href}&ticket=${ticket}&decision=allow`, { headers, redirect: 'manual' });
  }
  expect(res.status, await res.clone().text()).toBe(302);
  return new URL(res.headers.get('location')!);
}

/** The ID token, checked against the discovery jwks_uri with jose (neither client library checks a token endpoint's ID token signature). */
async function verifyIdToken(idToken: string, clientId: string, nonce: string) {
  const { payload, protectedHeader } = await jwtVerify(idToken, createRemoteJWKSet(new URL(`${issuer()}/jwks`)), {
    issuer: issuer(),
    audience: clientId,
    algorithms: ['ES256'],
  });
  expect(protectedHeader.alg).toBe('ES256');
  expect(payload).toMatchObject({ sub: a.adminEmail, nonce, azp: clientId });
  expect(typeof payload.auth_time).toBe('number');
  expect(payload.auth_time!).toBeLessThanOrEqual(payload.iat!);
  return payload;
}

const readsSecret = async (token: string) => (await api('GET', `/api/v1/secrets/${secretName}`, { key: token })).status;

beforeAll(async () => {
  [a, b] = await Promise.all([newAccount('oidc-op'), newAccount('oidc-op-b')]);
  secretName = unique('db');
  const made = await api('POST', '/api/v1/secrets', { key: a.adminKey, body: { name: secretName, data: { value: 'x' } } });
  expect(made.status, made.text).toBe(201);
});

afterAll(async () => {
  const leaks = await findLeaks({ dynamoEndpoint: inject('dynamoEndpoint'), tableName: inject('tableName'), logText: '', extra: exported });
  expect(leaks).toEqual([]);
});

describe('discovery (OpenID Connect Discovery 1.0, RFC 8414 metadata)', () => {
  it('advertises what is served: userinfo, introspection, revocation, end_session, public clients, the identity scopes', async () => {
    const res = await api('GET', '/api/v1/auth/oauth/.well-known/openid-configuration');
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      issuer: issuer(),
      userinfo_endpoint: `${issuer()}/userinfo`,
      introspection_endpoint: `${issuer()}/introspect`,
      revocation_endpoint: `${baseUrl()}/api/v1/auth/cli/revoke`,
      end_session_endpoint: `${issuer()}/logout`,
      jwks_uri: `${issuer()}/jwks`,
      token_endpoint_auth_methods_supported: expect.arrayContaining(['none', 'private_key_jwt']),
      scopes_supported: expect.arrayContaining(['openid', 'email', 'secrets:read']),
    });
    // every endpoint it names answers (none is a 404 of the gateway)
    for (const key of ['userinfo_endpoint', 'introspection_endpoint', 'revocation_endpoint', 'jwks_uri']) {
      const url = new URL(res.body[key] as string);
      const method = key === 'jwks_uri' || key === 'userinfo_endpoint' ? 'GET' : 'POST';
      const r = await fetch(url, { method, ...(method === 'POST' ? { body: new URLSearchParams({ token: 'x' }) } : {}) });
      expect([200, 400, 401], `${key} ${r.status}`).toContain(r.status);
    }
    const o4w = await oauth.processDiscoveryResponse(
      new URL(issuer()),
      await oauth.discoveryRequest(new URL(issuer()), { algorithm: 'oidc', [oauth.allowInsecureRequests]: true }),
    );
    expect(o4w.userinfo_endpoint).toBe(`${issuer()}/userinfo`);
  });

  it('RFC 8414 §3: the metadata at the well-known path formed from the issuer, as oauth4webapi discovers it; other issuer paths are 404', async () => {
    const request = await oauth.discoveryRequest(new URL(issuer()), { algorithm: 'oauth2', [oauth.allowInsecureRequests]: true });
    expect(new URL(request.url).pathname).toBe('/.well-known/oauth-authorization-server/api/v1/auth/oauth');
    const as = await oauth.processDiscoveryResponse(new URL(issuer()), request);
    expect(as).toMatchObject({
      issuer: issuer(),
      token_endpoint: `${issuer()}/token`,
      introspection_endpoint: `${issuer()}/introspect`,
      code_challenge_methods_supported: ['S256'],
    });
    // the document itself, not the envelope
    const raw = await fetch(`${baseUrl()}/.well-known/oauth-authorization-server/api/v1/auth/oauth`);
    expect(raw.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await raw.json()) as { success?: unknown }).success).toBeUndefined();
    for (const other of ['/.well-known/oauth-authorization-server/api/v1/auth', '/.well-known/oauth-authorization-server/api/v1/auth/oauth/x']) {
      expect((await fetch(`${baseUrl()}${other}`)).status, other).toBe(404);
    }
  });
});

describe('openid-client: code + PKCE + openid, ID token, userinfo, refresh, introspection, revocation, logout', () => {
  it('completes the whole OpenID Connect flow', async () => {
    const c = await newClient(a, {
      grant_types: ['authorization_code', 'refresh_token'],
      redirect_uris: [REDIRECT],
      scopes: ['secrets:read'],
    });
    const config = await client.discovery(new URL(issuer()), c.id, undefined, client.ClientSecretBasic(c.secret!), {
      execute: [client.allowInsecureRequests],
    });
    const verifier = client.randomPKCECodeVerifier();
    const nonce = client.randomNonce();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid email secrets:read',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      nonce,
      state,
      prompt: 'consent', // ignored (RFC 6749 §3.1)
    });
    const back = await approve(url);
    const tokens = await client.authorizationCodeGrant(config, back, {
      pkceCodeVerifier: verifier,
      expectedNonce: nonce,
      expectedState: state,
      idTokenExpected: true,
    });
    exported.push(tokens.access_token, tokens.refresh_token!, tokens.id_token!);
    expect(tokens.scope).toBe('openid email secrets:read');
    const idClaims = tokens.claims()!;
    expect(idClaims).toMatchObject({ iss: issuer(), aud: c.id, sub: a.adminEmail, nonce });
    const id = await verifyIdToken(tokens.id_token!, c.id, nonce);
    // at_hash: the left half of the access token's SHA-256 (OIDC Core §3.1.3.6)
    const digest = createHash('sha256').update(tokens.access_token).digest();
    expect(id.at_hash).toBe(digest.subarray(0, 16).toString('base64url'));

    // RFC 9068: the access token of the grant
    expect(decodeProtectedHeader(tokens.access_token).typ).toBe('at+jwt');
    expect(decodeJwt(tokens.access_token)).toMatchObject({ iss: issuer(), client_id: c.id, sub: a.adminEmail, aud: 'secrets-api', jti: expect.any(String) });
    expect(await readsSecret(tokens.access_token)).toBe(200);

    const info = await client.fetchUserInfo(config, tokens.access_token, a.adminEmail);
    expect(info).toEqual({ sub: a.adminEmail, email: a.adminEmail, email_verified: false });
    // the same by POST, the token in the form body (RFC 6750 §2.2)
    const posted = await fetch(`${issuer()}/userinfo`, { method: 'POST', body: new URLSearchParams({ access_token: tokens.access_token }) });
    expect(posted.status).toBe(200);
    expect(await posted.json()).toEqual(info);

    const active = await client.tokenIntrospection(config, tokens.access_token);
    expect(active).toMatchObject({ active: true, client_id: c.id, sub: a.adminEmail, scope: 'openid email secrets:read', iss: issuer(), token_type: 'Bearer' });
    const activeRefresh = await client.tokenIntrospection(config, tokens.refresh_token!);
    expect(activeRefresh).toMatchObject({ active: true, token_type: 'refresh_token', client_id: c.id });

    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    exported.push(refreshed.access_token, refreshed.refresh_token!);
    expect(refreshed.scope).toBe('openid email secrets:read');
    expect(decodeJwt(refreshed.access_token)).toMatchObject({ iss: issuer(), client_id: c.id });
    // userinfo still answers after a refresh: openid is kept (an identity scope, no role grants it)
    expect((await client.fetchUserInfo(config, refreshed.access_token, a.adminEmail)).sub).toBe(a.adminEmail);
    expect(await client.tokenIntrospection(config, tokens.refresh_token!)).toEqual({ active: false });

    await client.tokenRevocation(config, refreshed.refresh_token!);
    expect(await readsSecret(refreshed.access_token)).toBe(401);
    expect(await client.tokenIntrospection(config, refreshed.access_token)).toEqual({ active: false });
    await expect(client.fetchUserInfo(config, refreshed.access_token, a.adminEmail)).rejects.toMatchObject({ status: 401 });

    // RP-initiated logout: back to the registered URI with the state; any other URI is refused
    const logoutUrl = client.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: REDIRECT, state: 'bye' });
    expect(logoutUrl.href.startsWith(`${issuer()}/logout?`)).toBe(true);
    const session = await librarySession(a.tenantId, a.adminEmail);
    exported.push(session.access_token, session.refresh_token);
    const out = await fetch(logoutUrl, { headers: { cookie: `sc_session=${session.access_token}` }, redirect: 'manual' });
    expect(out.status).toBe(302);
    expect(out.headers.get('location')).toBe(`${REDIRECT}?state=bye`);
    expect(out.headers.get('set-cookie')).toMatch(/^sc_session=; Path=\/api\/v1\/auth; Max-Age=0; HttpOnly; SameSite=Lax/);
    expect(await readsSecret(session.access_token)).toBe(401);
    const elsewhere = client.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: 'https://evil.example.test/' });
    expect((await fetch(elsewhere, { redirect: 'manual' })).status).toBe(400);
  });
});

/** A client of the account with `redirect`, and an ID token issued to it by the code flow (openid-client). */
async function idTokenOf(acct: TestAccount, redirect: string) {
  const c = await newClient(acct, { grant_types: ['authorization_code'], redirect_uris: [redirect], scopes: ['secrets:read'] });
  const config = await client.discovery(new URL(issuer()), c.id, undefined, client.ClientSecretBasic(c.secret!), { execute: [client.allowInsecureRequests] });
  const verifier = client.randomPKCECodeVerifier();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirect,
    scope: 'openid',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  const tokens = await client.authorizationCodeGrant(config, await approve(url, acct), { pkceCodeVerifier: verifier, idTokenExpected: true });
  exported.push(tokens.access_token, tokens.id_token!);
  return { id: c.id, idToken: tokens.id_token!, config };
}

describe('RP-initiated logout: id_token_hint verified, post_logout_redirect_uri only the hinted client\u2019s', () => {
  it('refuses a forged, tampered, unsigned or unaddressed hint, and a redirect registered only for another client', async () => {
    const mine = await idTokenOf(a, REDIRECT);
    const other = await idTokenOf(a, 'https://rp-other.example.test/cb');
    const logout = (query: Record<string, string>) => fetch(`${issuer()}/logout?${new URLSearchParams(query)}`, { redirect: 'manual' });

    // the genuine hint, its own client's URI: back there
    const fine = await logout({ id_token_hint: mine.idToken, post_logout_redirect_uri: REDIRECT, state: 's1' });
    expect(fine.status).toBe(302);
    expect(fine.headers.get('location')).toBe(`${REDIRECT}?state=s1`);
    // another client's hint cannot send the person to this client's URI, nor this one's to the other's
    expect((await logout({ id_token_hint: other.idToken, post_logout_redirect_uri: REDIRECT })).status).toBe(400);
    expect((await logout({ id_token_hint: mine.idToken, post_logout_redirect_uri: 'https://rp-other.example.test/cb' })).status).toBe(400);
    // a hint and a client_id that disagree
    expect((await logout({ id_token_hint: mine.idToken, client_id: other.id })).status).toBe(400);

    // forged: the same claims and kid, signed by a key the attacker holds
    const header = decodeProtectedHeader(mine.idToken);
    const { privateKey } = await generateKeyPair('ES256');
    const forged = await new SignJWT(decodeJwt(mine.idToken)).setProtectedHeader({ alg: 'ES256', kid: header.kid!, typ: 'JWT' }).sign(privateKey);
    const forgedOut = await logout({ id_token_hint: forged, post_logout_redirect_uri: REDIRECT });
    expect(forgedOut.status).toBe(400);
    expect(forgedOut.headers.get('location')).toBeNull();
    // the genuine signature with one byte of the payload changed
    const [h, p, sig] = mine.idToken.split('.');
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...decodeJwt(mine.idToken), sub: 'someone-else' })).toString('base64url')}.${sig}`;
    expect(p).not.toBe(tampered.split('.')[1]);
    expect((await logout({ id_token_hint: tampered, post_logout_redirect_uri: REDIRECT })).status).toBe(400);
    // unsigned (alg none) and not a JWT at all
    const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${p}.`;
    expect((await logout({ id_token_hint: none, post_logout_redirect_uri: REDIRECT })).status).toBe(400);
    expect((await logout({ id_token_hint: 'not-a-jwt' })).status).toBe(400);
    // aud not a registered client (a client of the account deleted, or never one)
    const stranger = await new SignJWT({ ...decodeJwt(mine.idToken), aud: `${a.tenantId}.no-such-client` })
      .setProtectedHeader({ alg: 'ES256', kid: header.kid!, typ: 'JWT' })
      .sign(privateKey);
    expect((await logout({ id_token_hint: stranger, post_logout_redirect_uri: REDIRECT })).status).toBe(400);
  });
});

describe('oauth4webapi: the same flows with a second independent client', () => {
  let as: oauth.AuthorizationServer;
  const opts = { [oauth.allowInsecureRequests]: true } as const;

  beforeAll(async () => {
    as = await oauth.processDiscoveryResponse(new URL(issuer()), await oauth.discoveryRequest(new URL(issuer()), { algorithm: 'oidc', ...opts }));
  });

  it('code + PKCE + openid with client_secret_post: ID token, userinfo, refresh, introspection, revocation; RFC 9068 token validated', async () => {
    const c = await newClient(a, {
      grant_types: ['authorization_code', 'refresh_token'],
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'client_secret_post',
      scopes: ['secrets:read'],
    });
    const rp: oauth.Client = { client_id: c.id };
    const auth = oauth.ClientSecretPost(c.secret!);
    const verifier = oauth.generateRandomCodeVerifier();
    const nonce = oauth.generateRandomNonce();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: c.id,
      redirect_uri: REDIRECT,
      scope: 'openid secrets:read',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      nonce,
    }).toString();
    const params = oauth.validateAuthResponse(as, rp, await approve(url), oauth.expectNoState);
    const res = await oauth.authorizationCodeGrantRequest(as, rp, auth, params, REDIRECT, verifier, opts);
    const tokens = await oauth.processAuthorizationCodeResponse(as, rp, res, { expectedNonce: nonce, requireIdToken: true });
    exported.push(tokens.access_token, tokens.refresh_token!, tokens.id_token!);
    const claims = oauth.getValidatedIdTokenClaims(tokens)!;
    expect(claims).toMatchObject({ iss: issuer(), aud: c.id, sub: a.adminEmail, nonce });
    await verifyIdToken(tokens.id_token!, c.id, nonce);

    // RFC 9068 §4, as a resource server would check it: typ, iss, aud, client_id, sub, jti, exp, iat; signature by jwks_uri
    const at = await oauth.validateJwtAccessToken(
      as,
      new Request(`${baseUrl()}/api/v1/secrets`, { headers: { authorization: `Bearer ${tokens.access_token}` } }),
      'secrets-api',
      opts,
    );
    expect(at).toMatchObject({ iss: issuer(), client_id: c.id, sub: a.adminEmail, scope: 'openid secrets:read' });

    const info = await oauth.processUserInfoResponse(as, rp, claims.sub, await oauth.userInfoRequest(as, rp, tokens.access_token, opts));
    expect(info).toEqual({ sub: a.adminEmail }); // no `email` scope: no e-mail

    const introspected = await oauth.processIntrospectionResponse(as, rp, await oauth.introspectionRequest(as, rp, auth, tokens.access_token, opts));
    expect(introspected).toMatchObject({ active: true, client_id: c.id, sub: a.adminEmail });

    const refreshed = await oauth.processRefreshTokenResponse(as, rp, await oauth.refreshTokenGrantRequest(as, rp, auth, tokens.refresh_token!, opts));
    exported.push(refreshed.access_token, refreshed.refresh_token!);
    expect(await readsSecret(refreshed.access_token)).toBe(200);

    await oauth.processRevocationResponse(await oauth.revocationRequest(as, rp, auth, refreshed.access_token, opts));
    expect(await readsSecret(refreshed.access_token)).toBe(401);
    const after = await oauth.processIntrospectionResponse(as, rp, await oauth.introspectionRequest(as, rp, auth, refreshed.refresh_token!, opts));
    expect(after).toEqual({ active: false });
  });

  it('client_credentials with client_secret_basic, client_secret_post and private_key_jwt; introspection is for the client\u2019s own account', async () => {
    const basicClient = await newClient(a, { grant_types: ['client_credentials'], scopes: ['secrets:read'] });
    const postClient = await newClient(a, { grant_types: ['client_credentials'], token_endpoint_auth_method: 'client_secret_post', scopes: ['secrets:read'] });
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    const kid = unique('kid');
    const set = await api('POST', '/api/v1/oidc/jwks', {
      key: a.adminKey,
      body: { name: unique('rp-keys'), jwks: { keys: [{ ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' }] } },
    });
    expect(set.status, set.text).toBe(201);
    const jwtClient = await newClient(a, {
      grant_types: ['client_credentials'],
      token_endpoint_auth_method: 'private_key_jwt',
      jwks_id: set.body.data.jwks.id,
      scopes: ['secrets:read'],
    });
    const cases: [string, oauth.ClientAuth][] = [
      [basicClient.id, oauth.ClientSecretBasic(basicClient.secret!)],
      [postClient.id, oauth.ClientSecretPost(postClient.secret!)],
      [jwtClient.id, oauth.PrivateKeyJwt({ key: privateKey, kid })],
    ];
    for (const [id, auth] of cases) {
      const rp: oauth.Client = { client_id: id };
      const tokens = await oauth.processClientCredentialsResponse(as, rp, await oauth.clientCredentialsGrantRequest(as, rp, auth, { scope: 'secrets:read' }, opts));
      exported.push(tokens.access_token);
      expect(decodeJwt(tokens.access_token)).toMatchObject({ iss: issuer(), client_id: id, sub: `client:${id}`, scope: 'secrets:read' });
      expect(await readsSecret(tokens.access_token)).toBe(200);
      const seen = await oauth.processIntrospectionResponse(as, rp, await oauth.introspectionRequest(as, rp, auth, tokens.access_token, opts));
      expect(seen).toMatchObject({ active: true, client_id: id });
    }
    // a client of another account sees nothing of this account's tokens; a wrong secret is invalid_client
    const other = await newClient(b, { grant_types: ['client_credentials'], scopes: ['secrets:read'] });
    const rp: oauth.Client = { client_id: basicClient.id };
    const t = await oauth.processClientCredentialsResponse(as, rp, await oauth.clientCredentialsGrantRequest(as, rp, oauth.ClientSecretBasic(basicClient.secret!), {}, opts));
    exported.push(t.access_token);
    const foreign = await oauth.processIntrospectionResponse(
      as,
      { client_id: other.id },
      await oauth.introspectionRequest(as, { client_id: other.id }, oauth.ClientSecretBasic(other.secret!), t.access_token, opts),
    );
    expect(foreign).toEqual({ active: false });
    const wrong = await oauth.introspectionRequest(as, rp, oauth.ClientSecretBasic(`${basicClient.secret}x`), t.access_token, opts);
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { error: string }).error).toBe('invalid_client');
    // another client cannot revoke this client's token (RFC 7009 §2.1): 200, and the token stays good
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, { client_id: postClient.id }, oauth.ClientSecretPost(postClient.secret!), t.access_token, opts),
    );
    expect(await readsSecret(t.access_token)).toBe(200);
  });

  it('a public client (none) with PKCE gets tokens; it cannot introspect, and cannot be registered for client_credentials', async () => {
    const c = await newClient(a, { grant_types: ['authorization_code', 'refresh_token'], redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', scopes: ['secrets:read'] });
    expect(c.secret).toBeNull();
    const rp: oauth.Client = { client_id: c.id, token_endpoint_auth_method: 'none' };
    const verifier = oauth.generateRandomCodeVerifier();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: c.id,
      redirect_uri: REDIRECT,
      scope: 'secrets:read',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString();
    const params = oauth.validateAuthResponse(as, rp, await approve(url), oauth.expectNoState);
    const tokens = await oauth.processAuthorizationCodeResponse(as, rp, await oauth.authorizationCodeGrantRequest(as, rp, oauth.None(), params, REDIRECT, verifier, opts));
    exported.push(tokens.access_token, tokens.refresh_token!);
    expect(tokens.id_token).toBeUndefined(); // no openid: no ID token
    expect(await readsSecret(tokens.access_token)).toBe(200);
    const refreshed = await oauth.processRefreshTokenResponse(as, rp, await oauth.refreshTokenGrantRequest(as, rp, oauth.None(), tokens.refresh_token!, opts));
    exported.push(refreshed.access_token, refreshed.refresh_token!);
    const intro = await oauth.introspectionRequest(as, rp, oauth.None(), refreshed.access_token, opts);
    expect(intro.status).toBe(401);
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, rp, oauth.None(), refreshed.refresh_token!, opts));
    expect(await readsSecret(refreshed.access_token)).toBe(401);

    const cc = await api('POST', '/api/v1/oidc/clients', {
      key: a.adminKey,
      body: { name: unique('rp'), grant_types: ['client_credentials'], token_endpoint_auth_method: 'none' },
    });
    expect(cc.status).toBe(400);
    // the code grant without any client authentication is refused for a confidential client
    const conf = await newClient(a, { grant_types: ['authorization_code'], redirect_uris: [REDIRECT], scopes: ['secrets:read'] });
    const none = await api('POST', '/api/v1/auth/oauth/token', {
      rawBody: new URLSearchParams({ grant_type: 'authorization_code', client_id: conf.id, code: 'x', redirect_uri: REDIRECT, code_verifier: verifier }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(none.status).toBe(401);
    expect(oauthError(none)).toBe('invalid_client');
  });

  it('device authorization request (RFC 8628 §3.1) as oauth4webapi sends it', async () => {
    const device: oauth.AuthorizationServer = { issuer: baseUrl(), device_authorization_endpoint: `${baseUrl()}/api/v1/auth/cli/login` };
    const rp: oauth.Client = { client_id: 'secrets-cli' };
    const res = await oauth.deviceAuthorizationRequest(device, rp, oauth.None(), { scope: 'openid' }, opts);
    const started = await oauth.processDeviceAuthorizationResponse(device, rp, res);
    exported.push(started.device_code);
    expect(started).toMatchObject({ user_code: expect.any(String), verification_uri: expect.any(String), expires_in: expect.any(Number) });
  });
});

describe('userinfo refusals (RFC 6750 §3.1)', () => {
  it('no token, a bad token, a token without openid: the RFC error with WWW-Authenticate; POST takes the form access_token', async () => {
    const none = await fetch(`${issuer()}/userinfo`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const bad = await fetch(`${issuer()}/userinfo`, { headers: { authorization: 'Bearer abc.def.ghi' } });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toMatchObject({ error: 'invalid_token' });
    expect(bad.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    const session = await librarySession(a.tenantId, a.adminEmail);
    exported.push(session.access_token, session.refresh_token);
    const noOpenid = await fetch(`${issuer()}/userinfo`, { headers: { authorization: `Bearer ${session.access_token}` } });
    expect(noOpenid.status).toBe(403);
    expect(await noOpenid.json()).toMatchObject({ error: 'insufficient_scope' });
    const post = await fetch(`${issuer()}/userinfo`, {
      method: 'POST',
      body: new URLSearchParams({ access_token: session.access_token }),
    });
    expect(post.status).toBe(403);
  });
});

describe('an OAuth client acting for the person holds only its own scopes (issue 32\u2019s creator rule)', () => {
  it('a code-flow token of the creator does not read the creator\u2019s password, set their password, register a passkey or approve a CLI login', async () => {
    const session = await librarySession(a.tenantId, a.adminEmail);
    exported.push(session.access_token, session.refresh_token);
    // the admin's own sign-in creates the password: its creator is the admin
    const pw = await api('POST', '/api/v1/passwords', { key: session.access_token, body: { name: unique('pw'), username: 'u', password: `pw-${randomBytes(8).toString('hex')}` } });
    expect(pw.status, pw.text).toBe(201);
    const id = pw.body.data.password?.id ?? pw.body.data.id;
    expect((await api('GET', `/api/v1/passwords/${id}`, { key: session.access_token })).status).toBe(200);

    const c = await newClient(a, { grant_types: ['authorization_code'], redirect_uris: [REDIRECT], scopes: ['secrets:read'] });
    const verifier = randomBytes(32).toString('base64url');
    const url = new URL(`${issuer()}/authorize`);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: c.id,
      redirect_uri: REDIRECT,
      scope: 'secrets:read',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    const code = (await approve(url)).searchParams.get('code')!;
    const tokens = await api('POST', '/api/v1/auth/oauth/token', {
      rawBody: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }).toString(),
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${encodeURIComponent(c.id)}:${encodeURIComponent(c.secret!)}`).toString('base64')}`,
      },
    });
    expect(tokens.status, tokens.text).toBe(200);
    const token = tokens.body.access_token as string;
    exported.push(token);
    expect(await readsSecret(token)).toBe(200);
    const read = await api('GET', `/api/v1/passwords/${id}`, { key: token });
    expect(read.status, read.text).toBe(403);
    const passkey = await api('POST', '/api/v1/auth/webauthn/registration/begin', { key: token, body: {} });
    expect(passkey.status).toBe(403);
  });
});

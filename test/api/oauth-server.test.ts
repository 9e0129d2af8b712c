import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api, baseUrl, canary, errorCode, newAccount, oauthError, unique, type TestAccount } from '../helpers/api.js';
import { findLeaks } from '../helpers/leaks.js';
import { librarySession } from './sign-in.helpers.js';
import { scaled } from '../helpers/timeouts.js';
import { launchChromium, requireChromium } from '../helpers/browser.js';

/**
 * The authorization server (lib/oauth) driven by a client this project does not contain:
 * openid-client v6 discovers it, runs the authorization code flow with PKCE (the person's
 * step in headless Chromium through the sign-in page, with a passkey, and the consent
 * page), refreshes with rotation, and gets client_credentials tokens with
 * client_secret_basic and private_key_jwt. Then the workload token exchange (RFC 8693) with
 * a JWT signed by a key registered through the JWK-set store. Every token is used as a
 * Bearer token on ordinary routes, where it has exactly its scopes.
 */
/** The client's redirect URI: a real HTTP server of the test on 127.0.0.1, recording what the browser brings back. */
let REDIRECT = '';
let redirectServer: Server;
const arrivals: string[] = [];
let a: TestAccount;
let b: TestAccount;
let secret: { name: string; value: string };
const bSecret = unique('b-db');
const exported: string[] = [];
const issuer = () => `${baseUrl()}/api/v1/auth/oauth`;
const origin = () => `http://localhost:${new URL(baseUrl()).port}`;

function form(path: string, params: Record<string, string>, headers: Record<string, string> = {}) {
  return api('POST', path, { rawBody: new URLSearchParams(params).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers } });
}
const basic = (id: string, s: string) => ({ authorization: `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(s)}`).toString('base64')}` });

async function newClient(acct: TestAccount, body: Record<string, unknown>) {
  const res = await api('POST', '/api/v1/oidc/clients', { key: acct.adminKey, body: { name: unique('app'), ...body } });
  expect(res.status, res.text).toBe(201);
  if (res.body.data.client_secret) exported.push(res.body.data.client_secret);
  return res.body.data as { client: { id: string; client_id: string }; client_secret: string | null };
}

async function discover(clientId: string, auth: client.ClientAuth, metadata?: Partial<client.ClientMetadata>) {
  return client.discovery(new URL(issuer()), clientId, metadata, auth, { execute: [client.allowInsecureRequests] });
}

beforeAll(async () => {
  redirectServer = createServer((req, res) => {
    if (req.url?.startsWith('/cb')) arrivals.push(`${REDIRECT.replace(/\/cb$/, '')}${req.url}`); // not the browser's /favicon.ico
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
  await new Promise<void>((ok) => redirectServer.listen(0, '127.0.0.1', ok));
  REDIRECT = `http://127.0.0.1:${(redirectServer.address() as AddressInfo).port}/cb`;
  [a, b] = await Promise.all([newAccount('oauth'), newAccount('oauth-b')]);
  secret = { name: unique('db'), value: canary('oauth') };
  const made = await api('POST', '/api/v1/secrets', { key: a.adminKey, body: { name: secret.name, data: { value: secret.value } } });
  expect(made.status, made.text).toBe(201);
  const inB = await api('POST', '/api/v1/secrets', { key: b.adminKey, body: { name: bSecret, data: { value: canary('oauth-b') } } });
  expect(inB.status, inB.text).toBe(201);
});

afterAll(async () => {
  redirectServer?.close();
  const logText = readFileSync(inject('logFile'), 'utf8');
  const leaks = await findLeaks({ dynamoEndpoint: inject('dynamoEndpoint'), tableName: inject('tableName'), logText, extra: exported });
  expect(leaks).toEqual([]);
  // no issued token, refresh token or client secret in the runtime's log either
  expect(exported.length).toBeGreaterThan(10);
  expect(exported.filter((t) => logText.includes(t))).toEqual([]);
});

describe('discovery', () => {
  it('is a plain OpenID Provider Metadata document that openid-client accepts (issuer = the URL discovery was made from)', async () => {
    const res = await api('GET', '/api/v1/auth/oauth/.well-known/openid-configuration');
    expect(res.status, res.text).toBe(200);
    expect(res.body).not.toHaveProperty('success');
    expect(res.body).toMatchObject({
      issuer: issuer(),
      authorization_endpoint: `${issuer()}/authorize`,
      token_endpoint: `${issuer()}/token`,
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
    });
    const config = await discover('x', client.None());
    expect(config.serverMetadata().issuer).toBe(issuer());
  });

  it('400 on an unknown query parameter', async () => {
    const res = await api('GET', '/api/v1/auth/oauth/.well-known/openid-configuration?tenant=x');
    expect(res.status).toBe(400);
    expect(errorCode(res)).toBe('validation_failed');
  });
});

describe('client_credentials', () => {
  it('client_secret_basic through openid-client: a token with exactly the granted scopes', async () => {
    const { client: c, client_secret } = await newClient(a, { grant_types: ['client_credentials'], scopes: ['secrets:read', 'secrets:write'] });
    const config = await discover(c.client_id, client.ClientSecretBasic(client_secret!));
    const tokens = await client.clientCredentialsGrant(config, { scope: 'secrets:read' });
    exported.push(tokens.access_token);
    expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'secrets:read', expires_in: 900 });
    expect(tokens.refresh_token).toBeUndefined();
    const read = await api('GET', `/api/v1/secrets/${secret.name}`, { key: tokens.access_token });
    expect(read.status, read.text).toBe(200);
    expect(read.text).toContain(secret.value);
    const write = await api('POST', '/api/v1/secrets', { key: tokens.access_token, body: { name: unique('w'), data: { value: 'x' } } });
    expect(write.status).toBe(403);
    expect(errorCode(write)).toBe('insufficient_scope');
    // the other account's secret is a 404 to this token
    const other = await api('GET', `/api/v1/secrets/${bSecret}`, { key: tokens.access_token });
    expect(other.status).toBe(404);
  });

  it('client_secret_post; refusals are RFC 6749 errors', async () => {
    const { client: c, client_secret } = await newClient(a, {
      grant_types: ['client_credentials'],
      token_endpoint_auth_method: 'client_secret_post',
      scopes: ['secrets:read'],
    });
    const ok = await form('/api/v1/auth/oauth/token', { grant_type: 'client_credentials', client_id: c.client_id, client_secret: client_secret! });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toMatchObject({ token_type: 'Bearer', scope: 'secrets:read' });
    exported.push(ok.body.access_token);
    // the same through openid-client, as it sends client_secret_post
    const viaLibrary = await client.clientCredentialsGrant(await discover(c.client_id, client.ClientSecretPost(client_secret!)));
    exported.push(viaLibrary.access_token);
    expect(viaLibrary).toMatchObject({ token_type: 'bearer', scope: 'secrets:read' });
    expect((await api('GET', `/api/v1/secrets/${secret.name}`, { key: viaLibrary.access_token })).status).toBe(200);

    const wrong = await form('/api/v1/auth/oauth/token', { grant_type: 'client_credentials', client_id: c.client_id, client_secret: `${client_secret}x` });
    expect(wrong.status).toBe(401);
    expect(oauthError(wrong)).toBe('invalid_client');
    // its registered method is client_secret_post: Basic is refused
    const viaBasic = await form('/api/v1/auth/oauth/token', { grant_type: 'client_credentials' }, basic(c.client_id, client_secret!));
    expect(viaBasic.status).toBe(401);
    expect(oauthError(viaBasic)).toBe('invalid_client');
    expect(viaBasic.headers.get('www-authenticate')).toMatch(/^Basic/);
    const none = await form('/api/v1/auth/oauth/token', { grant_type: 'client_credentials' });
    expect(none.status).toBe(401);
    expect(oauthError(none)).toBe('invalid_client');
    const scope = await form('/api/v1/auth/oauth/token', { grant_type: 'client_credentials', client_id: c.client_id, client_secret: client_secret!, scope: 'secrets:write' });
    expect(scope.status).toBe(400);
    expect(oauthError(scope)).toBe('invalid_scope');
    const code = await form('/api/v1/auth/oauth/token', { grant_type: 'authorization_code', client_id: c.client_id, client_secret: client_secret!, code: 'x' });
    expect(code.status).toBe(400);
    expect(oauthError(code)).toBe('unauthorized_client');
    const grant = await form('/api/v1/auth/oauth/token', { grant_type: 'password', client_id: c.client_id, client_secret: client_secret! });
    expect(grant.status).toBe(400);
    expect(oauthError(grant)).toBe('unsupported_grant_type');
    const noCode = await form('/api/v1/auth/oauth/token', { grant_type: 'refresh_token', client_id: c.client_id, client_secret: client_secret! });
    expect(oauthError(noCode)).toBe('unauthorized_client');
    const mixed = await form('/api/v1/auth/oauth/token', { grant_type: 'client_credentials', client_id: c.client_id, client_secret: client_secret!, client_assertion: 'x' });
    expect(oauthError(mixed)).toBe('invalid_request');
    for (const bad of [
      { client_assertion_type: 'urn:other', client_assertion: 'x' },
      { client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: 'not-a-jwt' },
    ]) {
      const res = await form('/api/v1/auth/oauth/token', { grant_type: 'client_credentials', ...bad });
      expect(res.status).toBe(401);
      expect(oauthError(res)).toBe('invalid_client');
    }
    const missing = await form('/api/v1/auth/oauth/token', { client_id: c.client_id });
    expect(missing.status).toBe(400);
    expect(oauthError(missing)).toBe('invalid_request');
    // a client_id of another account with this secret: unknown there
    const forged = `${b.tenantId}.${c.id}`;
    const cross = await form('/api/v1/auth/oauth/token', { grant_type: 'client_credentials', client_id: forged, client_secret: client_secret! });
    expect(cross.status).toBe(401);
    expect(oauthError(cross)).toBe('invalid_client');
  });

  it('private_key_jwt with a key of the client\u2019s JWK set; a replayed or foreign assertion is invalid_client', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    const kid = unique('kid');
    const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' };
    const set = await api('POST', '/api/v1/oidc/jwks', { key: a.adminKey, body: { name: unique('client-keys'), jwks: { keys: [jwk] } } });
    expect(set.status, set.text).toBe(201);
    const { client: c } = await newClient(a, {
      grant_types: ['client_credentials'],
      token_endpoint_auth_method: 'private_key_jwt',
      jwks_id: set.body.data.jwks.id,
      scopes: ['secrets:read'],
    });
    const config = await discover(c.client_id, client.PrivateKeyJwt({ key: privateKey, kid }));
    const tokens = await client.clientCredentialsGrant(config);
    exported.push(tokens.access_token);
    expect(tokens.scope).toBe('secrets:read');
    expect((await api('GET', `/api/v1/secrets/${secret.name}`, { key: tokens.access_token })).status).toBe(200);

    const assertion = async (key: CryptoKey, jti = randomBytes(12).toString('hex')) =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'ES256', kid })
        .setIssuer(c.client_id)
        .setSubject(c.client_id)
        .setAudience(issuer())
        .setJti(jti)
        .setIssuedAt()
        .setExpirationTime('2m')
        .sign(key);
    const send = (jwt: string) =>
      form('/api/v1/auth/oauth/token', {
        grant_type: 'client_credentials',
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: jwt,
      });
    const once = await assertion(privateKey);
    expect((await send(once)).status).toBe(200);
    const replay = await send(once);
    expect(replay.status).toBe(401);
    expect(oauthError(replay)).toBe('invalid_client');
    const stranger = (await generateKeyPair('ES256')).privateKey;
    const foreign = await send(await assertion(stranger));
    expect(foreign.status).toBe(401);
    expect(oauthError(foreign)).toBe('invalid_client');
  });
});

describe('authorization code with PKCE through the sign-in page (headless Chromium)', () => {
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    requireChromium();
    // localhost is the local runtime's 127.0.0.1 (it does not listen on ::1)
    browser = await launchChromium(['--host-resolver-rules=MAP localhost 127.0.0.1']);
    context = await browser.newContext();
    page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable', { enableUI: false });
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    // the person's passkey, registered on the sign-in page in a session of their own
    const session = await librarySession(a.tenantId, a.adminEmail);
    await page.goto(`${origin()}/api/v1/auth/oidc/login`);
    await page.fill('#token', session.access_token);
    await page.click('#register');
    await page.waitForFunction(() => document.body.dataset.state !== 'ready', undefined, { timeout: 15_000 });
    expect(await page.getAttribute('body', 'data-state'), (await page.textContent('#status')) ?? '').toBe('registered');
  }, scaled(60_000));

  afterAll(async () => {
    await browser?.close();
  });

  /** The browser follows the authorization URL; the client's redirect is caught and its URL returned. */
  async function browse(url: URL, step: (p: Page) => Promise<void>): Promise<URL> {
    const before = arrivals.length;
    url.host = new URL(origin()).host; // WebAuthn wants a domain: the browser uses localhost
    await page.goto(url.href);
    await step(page);
    await page.waitForURL(`${REDIRECT}**`, { timeout: 15_000 });
    expect(arrivals.length).toBe(before + 1);
    return new URL(arrivals.at(-1)!);
  }

  it('signs in with a passkey, consents, and openid-client redeems the code; refresh rotates; a reused refresh token revokes the grant', async () => {
    const { client: c, client_secret } = await newClient(a, {
      grant_types: ['authorization_code', 'refresh_token'],
      redirect_uris: [REDIRECT],
      scopes: ['secrets:read', 'secrets:delete'],
    });
    const config = await discover(c.client_id, client.ClientSecretBasic(client_secret!));
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'secrets:read',
      state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const back = await browse(url, async (p) => {
      // no session: the sign-in page, the account filled in; the passkey signs in and the page resumes
      await p.waitForSelector('body[data-resume="true"]');
      expect(await p.inputValue('#account')).toBe(a.tenantId);
      await p.click('#passkey');
      await p.waitForSelector('body[data-state="consent"]', { timeout: 15_000 });
      expect(await p.textContent('#scopes')).toBe('secrets:read');
      await p.click('#allow');
    });
    expect(back.searchParams.get('state')).toBe(state);
    expect(back.searchParams.get('iss')).toBe(issuer());
    const tokens = await client.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, expectedState: state });
    exported.push(tokens.access_token, tokens.refresh_token!);
    expect(tokens.scope).toBe('secrets:read');
    expect(tokens.refresh_token).toMatch(/^scr_/);
    const read = await api('GET', `/api/v1/secrets/${secret.name}`, { key: tokens.access_token });
    expect(read.status, read.text).toBe(200);
    expect((await api('GET', '/api/v1/api-keys', { key: tokens.access_token })).status).toBe(403);

    // refresh with rotation
    const next = await client.refreshTokenGrant(config, tokens.refresh_token!);
    exported.push(next.access_token, next.refresh_token!);
    expect(next.refresh_token).not.toBe(tokens.refresh_token);
    expect(next.scope).toBe('secrets:read');
    expect((await api('GET', `/api/v1/secrets/${secret.name}`, { key: next.access_token })).status).toBe(200);
    // the refresh token is this client's: another client (even the sign-in refresh route) is refused
    const other = await newClient(b, { grant_types: ['refresh_token', 'client_credentials'], scopes: ['secrets:read'] });
    const foreign = await form('/api/v1/auth/oauth/token', { grant_type: 'refresh_token', refresh_token: next.refresh_token! }, basic(other.client.client_id, other.client_secret!));
    expect(foreign.status).toBe(400);
    expect(oauthError(foreign)).toBe('invalid_grant');
    const signInRefresh = await api('POST', '/api/v1/auth/refresh', { body: { refresh_token: next.refresh_token } });
    expect(signInRefresh.status).toBe(400);
    // once its successor is used, a used refresh token is a replay: invalid_grant, and the whole grant is revoked
    const after = await client.refreshTokenGrant(config, next.refresh_token!);
    exported.push(after.access_token, after.refresh_token!);
    const reused = await form('/api/v1/auth/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! }, basic(c.client_id, client_secret!));
    expect(reused.status).toBe(400);
    expect(oauthError(reused)).toBe('invalid_grant');
    expect((await api('GET', `/api/v1/secrets/${secret.name}`, { key: after.access_token })).status).toBe(401);

    // consent is remembered: the next authorization for the same scopes goes straight back
    const verifier2 = client.randomPKCECodeVerifier();
    const url2 = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'secrets:read',
      code_challenge: await client.calculatePKCECodeChallenge(verifier2),
      code_challenge_method: 'S256',
    });
    const back2 = await browse(url2, async () => {});
    const tokens2 = await client.authorizationCodeGrant(config, back2, { pkceCodeVerifier: verifier2 });
    exported.push(tokens2.access_token, tokens2.refresh_token!);
    expect(tokens2.scope).toBe('secrets:read');
    expect((await api('GET', `/api/v1/secrets/${secret.name}`, { key: tokens2.access_token })).status).toBe(200);
    // the code is single-use, and a replay revokes what its first exchange issued (RFC 6749 §4.1.2)
    const again = await form(
      '/api/v1/auth/oauth/token',
      { grant_type: 'authorization_code', code: back2.searchParams.get('code')!, redirect_uri: REDIRECT, code_verifier: verifier2 },
      basic(c.client_id, client_secret!),
    );
    expect(again.status).toBe(400);
    expect(oauthError(again)).toBe('invalid_grant');
    expect((await api('GET', `/api/v1/secrets/${secret.name}`, { key: tokens2.access_token })).status).toBe(401);
    // a wrong verifier is invalid_grant
    const url3 = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'secrets:read',
      code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    });
    const back3 = await browse(url3, async () => {});
    const wrong = await form(
      '/api/v1/auth/oauth/token',
      { grant_type: 'authorization_code', code: back3.searchParams.get('code')!, redirect_uri: REDIRECT, code_verifier: client.randomPKCECodeVerifier() },
      basic(c.client_id, client_secret!),
    );
    expect(wrong.status).toBe(400);
    expect(oauthError(wrong)).toBe('invalid_grant');
  }, scaled(90_000));

  it('deny answers access_denied to the client; the consent ticket is single-use; the session cookie is HttpOnly, SameSite=Lax', async () => {
    const { client: c, client_secret } = await newClient(a, { grant_types: ['authorization_code'], redirect_uris: [REDIRECT], scopes: ['secrets:read', 'secrets:delete'] });
    const config = await discover(c.client_id, client.ClientSecretBasic(client_secret!));
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'secrets:read secrets:delete',
      state: 's1',
      code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    });
    let form: Record<string, string> = {};
    const back = await browse(url, async (p) => {
      await p.waitForSelector('body[data-state="consent"]');
      form = Object.fromEntries(await p.$$eval('input[type=hidden]', (els) => els.map((e) => [(e as HTMLInputElement).name, (e as HTMLInputElement).value])));
      await p.click('#deny');
    });
    expect(Object.fromEntries(back.searchParams)).toMatchObject({ error: 'access_denied', state: 's1', iss: issuer() });
    // the browser holds the session as an HttpOnly, SameSite=Lax cookie scoped to /api/v1/auth
    const cookie = (await context.cookies()).find((k) => k.name === 'sc_session')!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/api/v1/auth' });
    // the consent ticket is single-use: replaying the form with "allow" is refused
    const replay = await fetch(`${baseUrl()}/api/v1/auth/oauth/authorize?${new URLSearchParams({ ...form, decision: 'allow' })}`, {
      redirect: 'manual',
      headers: { cookie: `sc_session=${cookie.value}` },
    });
    expect(replay.status).toBe(400);
    // a forged ticket too
    const forged = await fetch(`${baseUrl()}/api/v1/auth/oauth/authorize?${new URLSearchParams({ ...form, ticket: 'x'.repeat(43), decision: 'allow' })}`, {
      redirect: 'manual',
      headers: { cookie: `sc_session=${cookie.value}` },
    });
    expect(forged.status).toBe(400);
  }, scaled(60_000));

  it('oauth4webapi, a second independent client: code + PKCE with the person consenting in the browser', async () => {
    const { client: c, client_secret } = await newClient(a, {
      grant_types: ['authorization_code'],
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'client_secret_post',
      scopes: ['secrets:read'],
    });
    const opts = { [oauth.allowInsecureRequests]: true } as const;
    const as = await oauth.processDiscoveryResponse(new URL(issuer()), await oauth.discoveryRequest(new URL(issuer()), { algorithm: 'oidc', ...opts }));
    const rp: oauth.Client = { client_id: c.client_id };
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: c.client_id,
      redirect_uri: REDIRECT,
      scope: 'secrets:read',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString();
    const back = await browse(url, async (p) => {
      // the browser's session from the tests above, else the person signs in with the passkey; then consents
      await p.waitForSelector('body[data-resume="true"], body[data-state="consent"]');
      if ((await p.getAttribute('body', 'data-resume')) === 'true') await p.click('#passkey');
      await p.waitForSelector('body[data-state="consent"]', { timeout: 15_000 });
      expect(await p.textContent('#scopes')).toBe('secrets:read');
      await p.click('#allow');
    });
    const params = oauth.validateAuthResponse(as, rp, back, state);
    const res = await oauth.authorizationCodeGrantRequest(as, rp, oauth.ClientSecretPost(client_secret!), params, REDIRECT, verifier, opts);
    const tokens = await oauth.processAuthorizationCodeResponse(as, rp, res);
    exported.push(tokens.access_token);
    expect(tokens.scope).toBe('secrets:read');
    const read = await api('GET', `/api/v1/secrets/${secret.name}`, { key: tokens.access_token });
    expect(read.status, read.text).toBe(200);
  }, scaled(60_000));
});

describe('authorize refusals', () => {
  let c: { client_id: string };
  const q = (p: Record<string, string>) => `/api/v1/auth/oauth/authorize?${new URLSearchParams(p)}`;
  const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

  beforeAll(async () => {
    ({ client: c } = await newClient(a, { grant_types: ['authorization_code'], redirect_uris: [REDIRECT], scopes: ['secrets:read'] }));
  });

  it('an unknown client or a redirect URI not registered is shown (400), never redirected', async () => {
    const unknown = await api('GET', q({ response_type: 'code', client_id: `${a.tenantId}.${a.tenantId}`, redirect_uri: REDIRECT }));
    expect(unknown.status).toBe(400);
    expect(errorCode(unknown)).toBe('bad_request');
    const redirect = await api('GET', q({ response_type: 'code', client_id: c.client_id, redirect_uri: `${REDIRECT}/other` }));
    expect(redirect.status).toBe(400);
    expect(unknown.headers.get('location')).toBeNull();
  });

  it('no PKCE, plain PKCE, another response_type or scope: an error redirect with the state', async () => {
    const base = { client_id: c.client_id, redirect_uri: REDIRECT, state: 'st' };
    for (const [params, error] of [
      [{ response_type: 'code' }, 'invalid_request'],
      [{ response_type: 'code', code_challenge: challenge, code_challenge_method: 'plain' }, 'invalid_request'],
      [{ response_type: 'token', code_challenge: challenge, code_challenge_method: 'S256' }, 'unsupported_response_type'],
      [{ response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256', scope: 'admin:*' }, 'invalid_scope'],
    ] as const) {
      const res = await fetch(`${baseUrl()}${q({ ...base, ...params })}`, { redirect: 'manual' });
      expect(res.status).toBe(302);
      const to = new URL(res.headers.get('location')!);
      expect(`${to.origin}${to.pathname}`).toBe(REDIRECT);
      expect(Object.fromEntries(to.searchParams)).toMatchObject({ error, state: 'st' });
    }
  });

  it('a session of another account gets the sign-in page of the client\u2019s account, not a code', async () => {
    const other = await librarySession(b.tenantId, b.adminEmail);
    const res = await fetch(`${baseUrl()}${q({ response_type: 'code', client_id: c.client_id, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256' })}`, {
      redirect: 'manual',
      headers: { cookie: `sc_session=${other.access_token}` },
    });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain(`data-account="${a.tenantId}"`);
    exported.push(other.access_token);
  });
});

describe('workload token exchange (RFC 8693)', () => {
  const ISS = 'https://ci.example.test';
  const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
  const JWT_TYPE = 'urn:ietf:params:oauth:token-type:jwt';
  let key: CryptoKey;
  const kid = unique('ci');
  const aud = () => `urn:secrets-api:account:${a.tenantId}`;

  const workloadJwt = (claims: Record<string, unknown>, opts: { sub?: string; aud?: string; exp?: string | number; iss?: string; key?: CryptoKey } = {}) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid })
      .setIssuer(opts.iss ?? ISS)
      .setSubject(opts.sub ?? 'repo:acme/app:ref:refs/heads/main')
      .setAudience(opts.aud ?? aud())
      .setIssuedAt()
      .setExpirationTime(opts.exp ?? '5m')
      .sign(opts.key ?? key);
  const exchange = (token: string, extra: Record<string, string> = {}) =>
    form('/api/v1/auth/workload/token', { grant_type: EXCHANGE, subject_token: token, subject_token_type: JWT_TYPE, ...extra });

  beforeAll(async () => {
    const pair = await generateKeyPair('ES256', { extractable: true });
    key = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid, alg: 'ES256', use: 'sig' };
    const bindings = [
      { name: 'main', subject: 'repo:acme/app:ref:refs/heads/main', claims: { repository_owner: 'acme' }, scopes: ['secrets:read'], lifetime_seconds: 300 },
      { subject: 'repo:acme/app:ref:refs/heads/*', claims: { repository_owner: 'acme' }, scopes: ['secrets:delete'], lifetime_seconds: 120 },
    ];
    // an oidc:write key may keep JWK sets, but not bindings that mint tokens: admin only
    const writer = await a.key(['oidc:read', 'oidc:write']);
    const refused = await api('POST', '/api/v1/oidc/jwks', { key: writer, body: { name: unique('ci'), issuer: ISS, jwks: { keys: [jwk] }, workload_bindings: bindings } });
    expect(refused.status).toBe(403);
    const bad = await api('POST', '/api/v1/oidc/jwks', {
      key: a.adminKey,
      body: { name: unique('ci'), issuer: ISS, jwks: { keys: [jwk] }, workload_bindings: [{ subject: 'x', scopes: ['secret:reed'] }] },
    });
    expect(bad.status).toBe(400);
    const noIssuer = await api('POST', '/api/v1/oidc/jwks', { key: a.adminKey, body: { name: unique('ci'), jwks: { keys: [jwk] }, workload_bindings: bindings } });
    expect(noIssuer.status).toBe(400);
    const set = await api('POST', '/api/v1/oidc/jwks', { key: a.adminKey, body: { name: unique('ci'), issuer: ISS, jwks: { keys: [jwk] }, workload_bindings: bindings } });
    expect(set.status, set.text).toBe(201);
    expect(set.body.data.jwks.workload_bindings).toHaveLength(2);
    // the set now grants tokens: an oidc:write key cannot change its keys or delete it
    const change = await api('PUT', `/api/v1/oidc/jwks/${set.body.data.jwks.id}`, { key: writer, body: { jwks: { keys: [jwk] } } });
    expect(change.status).toBe(403);
    const del = await api('DELETE', `/api/v1/oidc/jwks/${set.body.data.jwks.id}`, { key: writer });
    expect(del.status).toBe(403);
  });

  it('a JWT of a registered issuer exchanges for a token with the binding\u2019s scopes and lifetime', async () => {
    const res = await exchange(await workloadJwt({ repository_owner: 'acme' }));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      access_token: expect.any(String),
      issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      token_type: 'Bearer',
      expires_in: 300,
      scope: 'secrets:read',
    });
    exported.push(res.body.access_token);
    const read = await api('GET', `/api/v1/secrets/${secret.name}`, { key: res.body.access_token });
    expect(read.status, read.text).toBe(200);
    expect((await api('POST', '/api/v1/secrets', { key: res.body.access_token, body: { name: unique('w'), data: { value: 'x' } } })).status).toBe(403);
    // the first binding that matches: another branch gets the second binding
    const branch = await exchange(await workloadJwt({ repository_owner: 'acme' }, { sub: 'repo:acme/app:ref:refs/heads/dev' }));
    expect(branch.status, branch.text).toBe(200);
    expect(branch.body).toMatchObject({ scope: 'secrets:delete', expires_in: 120 });
    exported.push(branch.body.access_token);
  });

  it('every refusal is the RFC error', async () => {
    const cases: [string, Promise<string> | string, Record<string, string>, string][] = [
      ['expired', workloadJwt({ repository_owner: 'acme' }, { exp: Math.floor(Date.now() / 1000) - 120 }), {}, 'invalid_request'],
      ['wrong audience', workloadJwt({ repository_owner: 'acme' }, { aud: 'https://elsewhere.example' }), {}, 'invalid_request'],
      ['another account', workloadJwt({ repository_owner: 'acme' }, { aud: `urn:secrets-api:account:${b.tenantId}` }), {}, 'invalid_request'],
      ['unknown issuer', workloadJwt({ repository_owner: 'acme' }, { iss: 'https://evil.example' }), {}, 'invalid_request'],
      ['unbound subject', workloadJwt({}, { sub: 'repo:mallory/app:ref:refs/heads/main' }), {}, 'invalid_request'],
      ['claim mismatch', workloadJwt({ repository_owner: 'mallory' }, { sub: 'repo:acme/app:ref:refs/heads/main' }), {}, 'invalid_request'],
      ['foreign key', generateKeyPair('ES256').then((p) => workloadJwt({ repository_owner: 'acme' }, { key: p.privateKey })), {}, 'invalid_request'],
      ['not a JWT', 'not-a-jwt', {}, 'invalid_request'],
      ['scope beyond', workloadJwt({ repository_owner: 'acme' }), { scope: 'secrets:write' }, 'invalid_scope'],
      ['token type', workloadJwt({ repository_owner: 'acme' }), { subject_token_type: 'urn:ietf:params:oauth:token-type:saml2' }, 'invalid_request'],
      ['audience parameter', workloadJwt({ repository_owner: 'acme' }), { audience: `urn:secrets-api:account:${b.tenantId}` }, 'invalid_target'],
      ['requested type', workloadJwt({ repository_owner: 'acme' }), { requested_token_type: 'urn:ietf:params:oauth:token-type:refresh_token' }, 'invalid_request'],
    ];
    for (const [what, token, extra, error] of cases) {
      const res = await exchange(await token, extra);
      expect(res.status, what).toBe(400);
      expect(oauthError(res), what).toBe(error);
    }
    const grant = await form('/api/v1/auth/workload/token', { grant_type: 'client_credentials', subject_token: 'x', subject_token_type: JWT_TYPE });
    expect(grant.status).toBe(400);
    expect(oauthError(grant)).toBe('unsupported_grant_type');
    const missing = await form('/api/v1/auth/workload/token', { grant_type: EXCHANGE });
    expect(missing.status).toBe(400);
    expect(oauthError(missing)).toBe('invalid_request');
  });
});

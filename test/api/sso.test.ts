import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import Provider from 'oidc-provider';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api, baseUrl, canary, errorCode, newAccount, rootKey, type TestAccount } from '../helpers/api.js';
import { findLeaks } from '../helpers/leaks.js';
import { allowLoopback } from './webhooks.helpers.js';
import { admitted, librarySession, type Tokens } from './sign-in.helpers.js';

/**
 * Single sign-on through the account's own identity provider: a real OpenID Connect
 * provider (oidc-provider) runs in this process on 127.0.0.1 (the account allows loopback
 * destinations, a development setting). A sign-in goes login → provider (the test's
 * interaction handler logs the person in and grants consent) → callback → session. The
 * provider's token answers can be tampered with: a flipped signature, an ID token re-signed
 * with another nonce; and a replayed state is refused.
 */
type Tamper = 'none' | 'signature' | 'nonce' | 'audience' | 'azp' | 'userinfo-sub' | 'userinfo-down';
interface Person {
  sub: string;
  email: string;
  groups: string[];
  /** The ID token's `email_verified`: true unless given; `omit` leaves the claim out. */
  verified?: boolean | 'omit';
}
let idp: { issuer: string; clientSecret: string; person: Person; tamper: Tamper; close(): Promise<void> };
let a: TestAccount;
let b: TestAccount;
const callbackPath = '/api/v1/auth/oidc/callback';
const secrets: string[] = [];

/**
 * `specDefaults`: oidc-provider as OpenID Connect Core has it (conformIdTokenClaims on, its
 * default): an ID token issued with an access token carries no scope-requested claim, the
 * person's e-mail is only at userinfo (§5.4). `slash`: an issuer that ends in `/` (as
 * Auth0's do), its discovery document at `<issuer minus the slash>/.well-known/...`.
 */
async function startIdp(opts: { specDefaults?: boolean; slash?: boolean } = {}): Promise<typeof idp> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signing = { ...(await exportJWK(privateKey)), kid: 'idp-1', alg: 'RS256', use: 'sig' } as JWK;
  const clientSecret = canary('sso-client-secret');
  const state = { person: { sub: 'u1', email: 'alice@corp.example.test', groups: [] } as Person, tamper: 'none' as Tamper };
  let oidc: Provider;
  const server: Server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}${opts.slash ? '/' : ''}`;
  oidc = new Provider(issuer, {
    jwks: { keys: [signing] },
    clients: [
      {
        client_id: 'secrets-api',
        client_secret: clientSecret,
        redirect_uris: [`${baseUrl()}${callbackPath}`],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    cookies: { keys: ['test-cookie-key'] },
    ...(opts.specDefaults ? {} : { conformIdTokenClaims: false }),
    claims: { openid: ['sub', 'groups'], email: ['email', 'email_verified'], profile: ['name'] },
    findAccount: (_ctx, sub) => ({
      accountId: sub,
      claims: () => ({
        sub,
        email: state.person.email,
        ...(state.person.verified === 'omit' ? {} : { email_verified: state.person.verified ?? true }),
        groups: state.person.groups,
        name: 'Test Person',
      }),
    }),
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  });
  async function handle(req: IncomingMessage, res: ServerResponse) {
    if (req.url?.startsWith('/moved/')) {
      res.writeHead(302, { location: new URL('/.well-known/openid-configuration', issuer).href }).end();
      return;
    }
    if (req.url?.startsWith('/text/')) {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('not json');
      return;
    }
    if (req.url?.startsWith('/interaction/')) {
      const details = await oidc.interactionDetails(req, res);
      if (details.prompt.name === 'login') {
        await oidc.interactionFinished(req, res, { login: { accountId: state.person.sub } }, { mergeWithLastSubmission: false });
      } else {
        const grant = new oidc.Grant({ accountId: details.session!.accountId, clientId: details.params.client_id as string });
        grant.addOIDCScope(String(details.params.scope));
        await oidc.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
      }
      return;
    }
    if (req.url?.startsWith('/me') && state.tamper === 'userinfo-down') {
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"temporarily_unavailable"}');
      return;
    }
    if (req.url?.startsWith('/me') && state.tamper === 'userinfo-sub') otherSubject(res);
    else if (req.url?.startsWith('/token') && !['none', 'userinfo-sub', 'userinfo-down'].includes(state.tamper)) tamperWith(res, state.tamper);
    oidc.callback()(req, res);
  }
  /** Rewrites the userinfo answer's `sub` (a provider answering about someone else). */
  function otherSubject(res: ServerResponse) {
    const end = res.end.bind(res);
    res.end = ((chunk: unknown) => {
      const out = JSON.stringify({ ...JSON.parse(Buffer.from(chunk as Buffer).toString('utf8')), sub: 'someone-else' });
      if (!res.headersSent) res.setHeader('content-length', Buffer.byteLength(out));
      return end(out);
    }) as typeof res.end;
  }
  /** Rewrites the token endpoint's answer before it leaves. */
  function tamperWith(res: ServerResponse, how: Tamper) {
    const end = res.end.bind(res);
    res.end = ((chunk: unknown) => {
      const body = JSON.parse(Buffer.from(chunk as Buffer).toString('utf8'));
      const finish = (idToken: string) => {
        const out = JSON.stringify({ ...body, id_token: idToken });
        if (!res.headersSent) res.setHeader('content-length', Buffer.byteLength(out));
        end(out);
      };
      const [h, p, s] = (body.id_token as string).split('.');
      if (how === 'signature') finish([h, p, `${s!.slice(0, -4)}${s!.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`].join('.'));
      else {
        const claims = decodeJwt(body.id_token);
        const changed =
          how === 'nonce'
            ? { ...claims, nonce: 'not-the-nonce' }
            : how === 'azp'
              ? { ...claims, aud: [String(claims.aud), 'another-client'], azp: 'another-client' }
              : { ...claims, aud: 'another-client' };
        void importJWK(signing, 'RS256').then((key) =>
          new SignJWT(changed).setProtectedHeader(decodeProtectedHeader(body.id_token) as { alg: string }).sign(key).then(finish),
        );
      }
      return res;
    }) as typeof res.end;
  }
  return {
    issuer,
    clientSecret,
    get person() {
      return state.person;
    },
    set person(p: Person) {
      state.person = p;
    },
    get tamper() {
      return state.tamper;
    },
    set tamper(t: Tamper) {
      state.tamper = t;
    },
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

/** The browser's part: follows redirects from the login route through the provider, with cookies, up to our callback URL. */
async function browse(tenantId: string, opts: { link?: boolean; session?: string } = {}): Promise<string> {
  const jar = new Map<string, string>(opts.session ? [['sc_session', opts.session]] : []);
  let url = `${baseUrl()}/api/v1/auth/oidc/login?tenant_id=${tenantId}${opts.link ? '&link=true' : ''}`;
  for (let hop = 0; hop < 12; hop++) {
    if (url.startsWith(`${baseUrl()}${callbackPath}`)) return url;
    const res = await fetch(url, { redirect: 'manual', headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const [k, v] = pair!.split('=');
      jar.set(k!.trim(), v ?? '');
    }
    const location = res.headers.get('location');
    if (!location) throw new Error(`no redirect at ${url}: ${res.status} ${await res.text()}`);
    url = new URL(location, url).toString();
  }
  throw new Error('too many redirects');
}

const callback = (url: string, session?: string) =>
  api('GET', url.slice(baseUrl().length), session ? { headers: { cookie: `sc_session=${session}` } } : {});

async function configure(account: TestAccount, overrides: Record<string, unknown> = {}) {
  const res = await api('PUT', `/api/v1/admin/tenants/${account.tenantId}/sso`, {
    key: rootKey(),
    body: {
      issuer: idp.issuer,
      client_id: 'secrets-api',
      client_secret: idp.clientSecret,
      allowed_domains: ['corp.example.test'],
      default_scopes: ['secrets:read'],
      claim_mappings: [{ claim: 'groups', value: 'vault-writers', scopes: ['secrets:write'] }],
      ...overrides,
    },
  });
  expect(res.status, res.text).toBe(200);
  return res;
}

beforeAll(async () => {
  [a, b] = await Promise.all([newAccount('sso'), newAccount('sso-b')]);
  idp = await startIdp();
  secrets.push(idp.clientSecret);
  await allowLoopback(a);
});

afterAll(async () => {
  await idp?.close();
});

describe('PUT /api/v1/admin/tenants/{id}/sso', () => {
  it('stores the configuration with the client secret sealed, shown never again', async () => {
    const res = await configure(a);
    expect(res.body.data.sso).toMatchObject({ issuer: idp.issuer, client_id: 'secrets-api', client_secret_set: true, allowed_domains: ['corp.example.test'] });
    expect(res.text).not.toContain(idp.clientSecret);
  });

  it('401, 403 for a non-operator, 404 for an unknown account, 400 on a bad body', async () => {
    const body = { issuer: idp.issuer, client_id: 'c', client_secret: 's', allowed_domains: ['corp.example.test'] };
    expect((await api('PUT', `/api/v1/admin/tenants/${a.tenantId}/sso`, { body })).status).toBe(401);
    const notOp = await api('PUT', `/api/v1/admin/tenants/${a.tenantId}/sso`, { key: a.adminKey, body });
    expect(notOp.status).toBe(403);
    expect(errorCode(notOp)).toBe('operator_required');
    expect((await api('PUT', '/api/v1/admin/tenants/00000000-0000-7000-8000-000000000000/sso', { key: rootKey(), body })).status).toBe(404);
    const bad = await api('PUT', `/api/v1/admin/tenants/${a.tenantId}/sso`, {
      key: rootKey(),
      body: { ...body, allowed_domains: [], default_scopes: ['secret:read'] },
    });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('did you mean');
  });
});

describe('sign-in through the account\u2019s identity provider', () => {
  it('login → provider → callback → session; the state is single use', async () => {
    idp.person = { sub: 'alice', email: 'Alice@corp.example.test', groups: ['vault-writers'] };
    const login = await fetch(`${baseUrl()}/api/v1/auth/oidc/login?tenant_id=${a.tenantId}`, { redirect: 'manual' });
    expect(login.status).toBe(302);
    const to = new URL(login.headers.get('location')!);
    expect(to.origin).toBe(idp.issuer);
    expect(to.searchParams.get('code_challenge_method')).toBe('S256');
    expect(to.searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(to.searchParams.get('nonce')).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const url = await browse(a.tenantId);
    const res = await callback(url);
    expect(res.status, res.text).toBe(200);
    const tokens = res.body.data as Tokens & { email: string };
    secrets.push(tokens.refresh_token);
    expect(tokens.email).toBe('alice@corp.example.test');
    expect(tokens.scope.split(' ').sort()).toEqual(['secrets:read', 'secrets:write']);
    expect(await admitted(tokens.access_token)).toBe(true);

    const replay = await callback(url);
    expect(replay.status).toBe(401);
    expect(errorCode(replay)).toBe('sign_in_failed');

    const users = await api('GET', `/api/v1/admin/tenants/${a.tenantId}/users`, { key: rootKey() });
    expect(users.body.data.users).toContainEqual(expect.objectContaining({ email: 'alice@corp.example.test', source: 'sso', role: 'viewer' }));

    const out = await api('POST', '/api/v1/auth/oidc/logout', { key: tokens.access_token });
    expect(out.status).toBe(200);
    expect(await admitted(tokens.access_token)).toBe(false);
  });

  it.each([
    ['signature', 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED'],
    ['nonce', 'nonce is not this sign-in'],
    ['audience', 'ERR_JWT_CLAIM_VALIDATION_FAILED'],
    ['azp', 'authorized party is another client'],
  ] as const)('refuses an ID token with a tampered %s (%s)', async (how, why) => {
    idp.person = { sub: 'bob', email: 'bob@corp.example.test', groups: [] };
    const url = await browse(a.tenantId);
    idp.tamper = how;
    try {
      const res = await callback(url);
      expect(res.status, res.text).toBe(401);
      expect(errorCode(res)).toBe('sign_in_failed');
      expect(res.body.error).toContain(why);
    } finally {
      idp.tamper = 'none';
    }
  });

  it('403 for an e-mail domain the account does not admit; 404 for an account without SSO; 400 on bad parameters', async () => {
    idp.person = { sub: 'mallory', email: 'mallory@elsewhere.example', groups: [] };
    const res = await callback(await browse(a.tenantId));
    expect(res.status).toBe(403);
    expect(res.body.error).toContain('elsewhere.example');

    const none = await api('GET', `/api/v1/auth/oidc/login?tenant_id=${b.tenantId}`);
    expect(none.status).toBe(404);
    expect((await api('GET', '/api/v1/auth/oidc/login?tenant_id=nope')).status).toBe(400);
    expect((await api('GET', `${callbackPath}?state=${'x'.repeat(43)}`)).status).toBe(400);
    const unknownState = await api('GET', `${callbackPath}?code=abc&state=${'x'.repeat(43)}`);
    expect(unknownState.status).toBe(401);
  });

  it('maps users: an SSO user\u2019s scopes follow its claims; no verified e-mail or no scope is refused', async () => {
    await configure(a, { allowed_domains: ['corp.example.test', 'example.test'] });
    try {
      idp.person = { sub: 'alice', email: 'alice@corp.example.test', groups: ['other-group'] };
      const again = await callback(await browse(a.tenantId));
      expect(again.status, again.text).toBe(200);
      secrets.push(again.body.data.refresh_token);
      expect(again.body.data.scope).toBe('secrets:read');

      idp.person = { sub: 'nomail', email: '', groups: [] };
      const noMail = await callback(await browse(a.tenantId));
      expect(noMail.status).toBe(403);
      expect(noMail.body.error).toContain('verified e-mail');

      for (const verified of ['omit', false] as const) {
        idp.person = { sub: `unverified-${verified}`, email: `dave-${verified}@corp.example.test`, groups: [], verified };
        const unverified = await callback(await browse(a.tenantId));
        const who = `GET ${callbackPath} as the provider's ${idp.person.sub} (a new e-mail, email_verified ${verified === 'omit' ? 'absent' : verified}): got ${unverified.status} ${unverified.body?.code ?? ''}`;
        expect(unverified.status, who).toBe(403);
        expect(unverified.body.error, who).toContain('email_verified must be true');
      }

      await configure(a, { default_scopes: [] });
      idp.person = { sub: 'carol', email: 'carol@corp.example.test', groups: [] };
      const none = await callback(await browse(a.tenantId));
      expect(none.status).toBe(403);
      expect(none.body.error).toContain('no scope');
    } finally {
      await configure(a);
    }
  });

  it('never signs in as the account\u2019s admin (a password or passkey user) by e-mail, verified or not, nor as another identity\u2019s SSO user', async () => {
    await configure(a, { allowed_domains: ['corp.example.test', 'example.test'] });
    try {
      for (const verified of ['omit', false, true] as const) {
        idp.person = { sub: `admin-${verified}`, email: a.adminEmail.toUpperCase(), groups: ['vault-writers'], verified };
        const res = await callback(await browse(a.tenantId));
        const who = `GET ${callbackPath} as the provider's ${idp.person.sub} (the account admin's e-mail, email_verified ${verified === 'omit' ? 'absent' : verified}): got ${res.status} ${res.body?.code ?? ''}`;
        expect(res.status, who).toBe(verified === true ? 409 : 403);
        expect(res.body.data, who).toBeUndefined();
        expect(res.text, who).not.toContain('admin:*');
        if (verified === true) {
          expect(errorCode(res)).toBe('sso_identity_conflict');
          expect(res.body.error).toContain('never takes over an existing user');
        }
      }
      const users = await api('GET', `/api/v1/admin/tenants/${a.tenantId}/users`, { key: rootKey() });
      expect(users.body.data.users).toContainEqual(expect.objectContaining({ email: a.adminEmail.toLowerCase(), source: 'admin', role: 'admin' }));

      // an SSO user belongs to the identity that created it: another subject with its e-mail is refused
      idp.person = { sub: 'erin-1', email: 'erin@corp.example.test', groups: [] };
      const first = await callback(await browse(a.tenantId));
      expect(first.status, first.text).toBe(200);
      secrets.push(first.body.data.refresh_token);
      idp.person = { sub: 'erin-2', email: 'erin@corp.example.test', groups: ['vault-writers'] };
      const other = await callback(await browse(a.tenantId));
      expect(other.status, other.text).toBe(409);
      expect(errorCode(other)).toBe('sso_identity_conflict');
      idp.person = { sub: 'erin-1', email: 'erin@corp.example.test', groups: [] };
      const same = await callback(await browse(a.tenantId));
      expect(same.status, same.text).toBe(200);
      secrets.push(same.body.data.refresh_token);
    } finally {
      await configure(a);
    }
  });

  it('provider failures: no discovery document, another issuer in it, a refused client secret; a suspended account', async () => {
    const c = await newAccount('sso-c');
    await allowLoopback(c);
    await configure(c, { issuer: `${idp.issuer}/nowhere` });
    const missing = await api('GET', `/api/v1/auth/oidc/login?tenant_id=${c.tenantId}`);
    expect(missing.status).toBe(502);
    expect(missing.body.error).toContain('HTTP 404');

    for (const [issuer, why] of [
      [`${idp.issuer}/moved`, 'redirect not followed'],
      [`${idp.issuer}/text`, 'not JSON'],
      ['http://idp.invalid', 'does not resolve'],
      ['http://10.0.0.1', 'private'],
    ]) {
      await configure(c, { issuer });
      const res = await api('GET', `/api/v1/auth/oidc/login?tenant_id=${c.tenantId}`);
      expect(res.status).toBe(502);
      expect(res.body.error).toContain(why);
    }

    await configure(c, { issuer: idp.issuer.replace('127.0.0.1', 'localhost') });
    const other = await api('GET', `/api/v1/auth/oidc/login?tenant_id=${c.tenantId}`);
    expect(other.status).toBe(502);
    expect(other.body.error).toContain('another issuer');

    await configure(c, { client_secret: canary('wrong-secret') });
    idp.person = { sub: 'dave', email: 'dave@corp.example.test', groups: [] };
    const refusedSecret = await callback(await browse(c.tenantId));
    expect(refusedSecret.status).toBe(401);
    expect(refusedSecret.body.error).toContain('token endpoint answered HTTP 401');

    expect((await api('PATCH', `/api/v1/admin/tenants/${c.tenantId}/suspend`, { key: rootKey() })).status).toBe(200);
    const suspended = await api('GET', `/api/v1/auth/oidc/login?tenant_id=${c.tenantId}`);
    expect(suspended.status).toBe(403);
    expect(errorCode(suspended)).toBe('tenant_suspended');
  });

  it('the provider must be an allowed destination: a loopback issuer is refused without the development setting', async () => {
    await configure(b);
    const res = await api('GET', `/api/v1/auth/oidc/login?tenant_id=${b.tenantId}`);
    expect(res.status).toBe(502);
    expect(errorCode(res)).toBe('idp_failed');
    expect(res.body.error).toContain('loopback');
  });

  it('serves the sign-in page (HTML, its script admitted by hash) without an account', async () => {
    const res = await api('GET', '/api/v1/auth/oidc/login');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('content-security-policy')).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(res.text).toContain('Sign in with a passkey');
  });
});

describe('an identity provider with OpenID Connect Core\u2019s defaults and an issuer ending in /', () => {
  let spec: typeof idp;
  let d: TestAccount;

  beforeAll(async () => {
    spec = await startIdp({ specDefaults: true, slash: true });
    secrets.push(spec.clientSecret);
    d = await newAccount('sso-spec');
    await allowLoopback(d);
  });

  afterAll(async () => {
    await spec?.close();
  });

  it('stores the issuer as the provider names it, reads e-mail and groups from userinfo, signs in', async () => {
    expect(spec.issuer.endsWith('/')).toBe(true);
    const put = await configure(d, { issuer: spec.issuer, client_secret: spec.clientSecret });
    expect(put.body.data.sso.issuer).toBe(spec.issuer);

    spec.person = { sub: 'erin', email: 'Erin@corp.example.test', groups: ['vault-writers'] };
    const url = await browse(d.tenantId);
    const res = await callback(url);
    expect(res.status, res.text).toBe(200);
    const tokens = res.body.data as Tokens & { email: string };
    secrets.push(tokens.refresh_token);
    expect(tokens.email).toBe('erin@corp.example.test');
    // groups came only from userinfo too: the mapping gave secrets:write
    expect(tokens.scope.split(' ').sort()).toEqual(['secrets:read', 'secrets:write']);
    expect(await admitted(tokens.access_token)).toBe(true);
    const users = await api('GET', `/api/v1/admin/tenants/${d.tenantId}/users`, { key: rootKey() });
    expect(users.body.data.users).toContainEqual(expect.objectContaining({ email: 'erin@corp.example.test', source: 'sso' }));

    // the same identity signs in again: the stored issuer (with its /) still matches the user's
    const again = await callback(await browse(d.tenantId));
    expect(again.status, again.text).toBe(200);
    secrets.push((again.body.data as Tokens).refresh_token);
  });

  it('the ID token carries no e-mail (the provider conforms): without a verified e-mail at userinfo either, refused', async () => {
    await configure(d, { issuer: spec.issuer, client_secret: spec.clientSecret });
    spec.person = { sub: 'frank', email: 'frank@corp.example.test', groups: [], verified: false };
    const res = await callback(await browse(d.tenantId));
    expect(res.status, res.text).toBe(403);
    expect(res.body.error).toContain('email_verified');
  });

  it('refuses a userinfo answer about another subject than the ID token\u2019s', async () => {
    await configure(d, { issuer: spec.issuer, client_secret: spec.clientSecret });
    spec.person = { sub: 'grace', email: 'grace@corp.example.test', groups: [] };
    const url = await browse(d.tenantId);
    spec.tamper = 'userinfo-sub';
    try {
      const res = await callback(url);
      expect(res.status, res.text).toBe(401);
      expect(errorCode(res)).toBe('sign_in_failed');
      expect(res.body.error).toContain('another subject');
    } finally {
      spec.tamper = 'none';
    }
  });

  it('links the admin\u2019s account only by the explicit step from its own session; then that identity signs in as the admin', async () => {
    const domain = d.adminEmail.split('@')[1]!;
    await configure(d, { issuer: spec.issuer, client_secret: spec.clientSecret, allowed_domains: ['corp.example.test', domain] });
    spec.person = { sub: 'admin-at-idp', email: d.adminEmail, groups: [] };
    // by e-mail alone: never
    const implicit = await callback(await browse(d.tenantId));
    expect(implicit.status, implicit.text).toBe(409);
    expect(errorCode(implicit)).toBe('sso_identity_conflict');

    // the step needs the admin's own sign-in session
    const anonymous = await api('GET', `/api/v1/auth/oidc/login?tenant_id=${d.tenantId}&link=true`);
    expect(anonymous.status).toBe(401);
    expect(errorCode(anonymous)).toBe('sign_in_required');
    const session = await librarySession(d.tenantId, d.adminEmail);
    secrets.push(session.access_token, session.refresh_token);
    const otherAccount = await librarySession(a.tenantId, a.adminEmail);
    secrets.push(otherAccount.access_token, otherAccount.refresh_token);
    expect((await api('GET', `/api/v1/auth/oidc/login?tenant_id=${d.tenantId}&link=true`, { headers: { cookie: `sc_session=${otherAccount.access_token}` } })).status).toBe(401);

    // the provider vouches for another address than the signed-in admin's: refused
    spec.person = { sub: 'someone', email: `someone@${domain}`, groups: [] };
    const wrongPerson = await callback(await browse(d.tenantId, { link: true, session: session.access_token }), session.access_token);
    expect(wrongPerson.status, wrongPerson.text).toBe(403);
    // finished in another browser (no session cookie): refused
    spec.person = { sub: 'admin-at-idp', email: d.adminEmail, groups: [] };
    const elsewhere = await callback(await browse(d.tenantId, { link: true, session: session.access_token }));
    expect(elsewhere.status, elsewhere.text).toBe(401);
    expect(errorCode(elsewhere)).toBe('sign_in_failed');

    // the step itself: same browser, same session, same verified address
    const linked = await callback(await browse(d.tenantId, { link: true, session: session.access_token }), session.access_token);
    expect(linked.status, linked.text).toBe(200);
    secrets.push((linked.body.data as Tokens).refresh_token);
    expect(linked.body.data.email).toBe(d.adminEmail);

    // from now on that identity signs in as the admin, with the admin's own scopes (not the mapped ones)
    const viaSso = await callback(await browse(d.tenantId));
    expect(viaSso.status, viaSso.text).toBe(200);
    const tokens = viaSso.body.data as Tokens;
    secrets.push(tokens.refresh_token);
    expect(tokens.scope.split(' ')).not.toContain('secrets:write');
    expect(tokens.scope).toBe(session.scope);
    const users = await api('GET', `/api/v1/admin/tenants/${d.tenantId}/users`, { key: rootKey() });
    expect(users.body.data.users).toContainEqual(expect.objectContaining({ email: d.adminEmail, source: 'admin' }));

    // another identity of the provider with the same address still cannot
    spec.person = { sub: 'impostor', email: d.adminEmail, groups: [] };
    const impostor = await callback(await browse(d.tenantId));
    expect(impostor.status, impostor.text).toBe(409);
    // nor can it link itself over the bound one
    const relink = await callback(await browse(d.tenantId, { link: true, session: session.access_token }), session.access_token);
    expect(relink.status, relink.text).toBe(409);
  });

  it('a userinfo endpoint that fails is the provider\u2019s failure (502 idp_failed), not a sign-in', async () => {
    await configure(d, { issuer: spec.issuer, client_secret: spec.clientSecret });
    spec.person = { sub: 'heidi', email: 'heidi@corp.example.test', groups: [] };
    const url = await browse(d.tenantId);
    spec.tamper = 'userinfo-down';
    try {
      const res = await callback(url);
      expect(res.status, res.text).toBe(502);
      expect(errorCode(res)).toBe('idp_failed');
      expect(res.body.error).toContain('userinfo');
    } finally {
      spec.tamper = 'none';
    }
  });

  it('an issuer configured without the provider\u2019s / is another issuer (compared exactly, never normalized)', async () => {
    await configure(d, { issuer: spec.issuer.slice(0, -1), client_secret: spec.clientSecret });
    const res = await api('GET', `/api/v1/auth/oidc/login?tenant_id=${d.tenantId}`);
    expect(res.status).toBe(502);
    expect(res.body.error).toContain('another issuer');
  });
});

afterAll(async () => {
  const leaks = await findLeaks({
    dynamoEndpoint: inject('dynamoEndpoint'),
    tableName: inject('tableName'),
    logText: readFileSync(inject('logFile'), 'utf8'),
    extra: secrets,
  });
  expect(leaks).toEqual([]);
});

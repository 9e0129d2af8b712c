import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, baseUrl, errorCode, newAccount, type TestAccount } from '../helpers/api.js';
import { admitted, librarySession, type Tokens } from './sign-in.helpers.js';
import { scaled } from '../helpers/timeouts.js';
import { launchChromium, requireChromium } from '../helpers/browser.js';

/**
 * Passkeys in a real browser: Debian's Chromium, driven by playwright-core, with the
 * DevTools virtual authenticator (CTAP2, resident keys, user verification). The person
 * registers a passkey on the sign-in page in a session of their own, then signs in with it
 * on the same page; its signature counter is the authenticator's; a cloned authenticator
 * (the same key with an older counter) and a deleted passkey are refused. WebAuthn needs a
 * domain as RP ID, so the page is opened at http://localhost:<port> (lib/users/passkeys.ts).
 */
let a: TestAccount;
let b: TestAccount;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let cdp: CDPSession;
let authenticatorId: string;
const origin = () => `http://localhost:${new URL(baseUrl()).port}`;

async function openPage() {
  await page.goto(`${origin()}/api/v1/auth/oidc/login`);
  await page.waitForSelector('body[data-state="ready"]');
}

/** Clicks and waits for the page's outcome; returns [state, status text]. */
async function outcome(button: string): Promise<[string, string]> {
  await page.click(button);
  await page.waitForFunction(() => document.body.dataset.state !== 'ready', undefined, { timeout: 15_000 });
  return [(await page.getAttribute('body', 'data-state'))!, (await page.textContent('#status'))!];
}

async function signInWithPasskey(): Promise<[string, string]> {
  await openPage();
  await page.fill('#account', a.tenantId);
  return outcome('#passkey');
}

beforeAll(async () => {
  requireChromium();
  [a, b] = await Promise.all([newAccount('passkey'), newAccount('passkey-b')]);
  browser = await launchChromium();
  context = await browser.newContext();
  page = await context.newPage();
  cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  ({ authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  }));
}, scaled(60_000));

afterAll(async () => {
  await browser?.close();
});

describe('passkeys through the sign-in page (headless Chromium, virtual authenticator)', () => {
  let credentialId = '';

  it('registers a passkey in a session, then signs in with it; the counter follows the authenticator', async () => {
    const session = await librarySession(a.tenantId, a.adminEmail);
    await openPage();
    await page.fill('#account', a.tenantId);
    await page.fill('#token', session.access_token);
    await page.fill('#name', 'laptop');
    const [state, status] = await outcome('#register');
    expect(state, status).toBe('registered');

    const listed = await api('GET', '/api/v1/webauthn/credentials', { key: session.access_token });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.data.credentials).toHaveLength(1);
    const cred = listed.body.data.credentials[0];
    expect(cred).toMatchObject({ user: a.adminEmail, name: 'laptop', last_used_at: null });
    credentialId = cred.id;
    expect(status).toContain(credentialId);

    const [signedIn, text] = await signInWithPasskey();
    expect(signedIn, text).toBe('signed-in');
    expect(text).toContain(a.adminEmail);
    const tokens = JSON.parse((await page.evaluate(() => sessionStorage.getItem('session')))!) as Tokens;
    expect(await admitted(tokens.access_token)).toBe(true);

    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    const after = await api('GET', '/api/v1/webauthn/credentials', { key: a.adminKey });
    expect(after.body.data.credentials[0].counter).toBe(credentials[0]!.signCount);
    expect(after.body.data.credentials[0].last_used_at).not.toBeNull();

    // a second sign-in works and moves the counter on
    expect((await signInWithPasskey())[0]).toBe('signed-in');
    const again = await api('GET', '/api/v1/webauthn/credentials', { key: a.adminKey });
    expect(again.body.data.credentials[0].counter).toBeGreaterThan(after.body.data.credentials[0].counter);
  });

  it('refuses a cloned authenticator (the same key with an older counter)', async () => {
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    const original = credentials[0]!;
    await cdp.send('WebAuthn.removeCredential', { authenticatorId, credentialId: original.credentialId });
    await cdp.send('WebAuthn.addCredential', { authenticatorId, credential: { ...original, signCount: 0 } });
    const [state, status] = await signInWithPasskey();
    expect(state).toBe('failed');
    expect(status).toMatch(/counter/i);
    // the genuine authenticator again (its counter ahead of the stored one) is admitted
    await cdp.send('WebAuthn.removeCredential', { authenticatorId, credentialId: original.credentialId });
    await cdp.send('WebAuthn.addCredential', { authenticatorId, credential: { ...original, signCount: original.signCount + 10 } });
    expect((await signInWithPasskey())[0]).toBe('signed-in');
  });

  it('DELETE /api/v1/webauthn/credentials/{id}: the passkey no longer signs in', async () => {
    const other = await api('DELETE', `/api/v1/webauthn/credentials/${credentialId}`, { key: b.adminKey });
    expect(other.status).toBe(404);
    const narrow = await api('DELETE', `/api/v1/webauthn/credentials/${credentialId}`, { key: await a.key(['secrets:read']) });
    expect(narrow.status).toBe(403);
    expect((await api('DELETE', `/api/v1/webauthn/credentials/${credentialId}`)).status).toBe(401);
    expect((await api('DELETE', '/api/v1/webauthn/credentials/not!an!id', { key: a.adminKey })).status).toBe(400);
    const del = await api('DELETE', `/api/v1/webauthn/credentials/${credentialId}`, { key: a.adminKey });
    expect(del.status, del.text).toBe(200);
    expect(del.body.data).toEqual({ deleted: true, credential: { id: credentialId, name: 'laptop' } });
    const [state, status] = await signInWithPasskey();
    expect(state).toBe('failed');
    expect(status).toContain('unknown passkey');
  });
});

describe('passkey routes: refusals', () => {
  it('registration: 401 without credentials, 403 with an API key, 404 for a challenge of another user, 400 on a bad body', async () => {
    expect((await api('POST', '/api/v1/auth/webauthn/registration/begin', { body: {} })).status).toBe(401);
    const byKey = await api('POST', '/api/v1/auth/webauthn/registration/begin', { key: a.adminKey, body: {} });
    expect(byKey.status).toBe(403);
    const mine = await librarySession(a.tenantId, a.adminEmail);
    const theirs = await librarySession(b.tenantId, b.adminEmail);
    const begun = await api('POST', '/api/v1/auth/webauthn/registration/begin', { key: mine.access_token, body: {} });
    expect(begun.status, begun.text).toBe(200);
    expect(begun.body.data.options).toMatchObject({ rp: { id: 'localhost' }, authenticatorSelection: { userVerification: 'required', residentKey: 'required' } });
    const fake = { id: 'AAAAAAAAAAAAAAAAAAAAAA', rawId: 'AAAAAAAAAAAAAAAAAAAAAA', type: 'public-key', response: { clientDataJSON: 'e30', attestationObject: 'oA' } };
    const cross = await api('POST', '/api/v1/auth/webauthn/registration/finish', {
      key: theirs.access_token,
      body: { challenge_id: begun.body.data.challenge_id, response: fake },
    });
    expect(cross.status).toBe(404);
    const bad = await api('POST', '/api/v1/auth/webauthn/registration/finish', { key: mine.access_token, body: { challenge_id: 'x', response: {} } });
    expect(bad.status).toBe(400);
    // a forged attestation against a live challenge
    const again = await api('POST', '/api/v1/auth/webauthn/registration/begin', { key: mine.access_token, body: {} });
    const forged = await api('POST', '/api/v1/auth/webauthn/registration/finish', {
      key: mine.access_token,
      body: { challenge_id: again.body.data.challenge_id, response: fake },
    });
    expect(forged.status).toBe(401);
    expect(errorCode(forged)).toBe('sign_in_failed');
  });

  it('authentication: 401 for an unknown challenge, 400 on a bad body; options for anyone', async () => {
    const begun = await api('POST', '/api/v1/auth/webauthn/authentication/begin', { body: { tenant_id: a.tenantId, email: 'nobody@example.test' } });
    expect(begun.status).toBe(200);
    expect(begun.body.data.options).toMatchObject({ rpId: 'localhost', userVerification: 'required', allowCredentials: [] });
    const fake = { id: 'AAAAAAAAAAAAAAAAAAAAAA', rawId: 'AAAAAAAAAAAAAAAAAAAAAA', type: 'public-key', response: { clientDataJSON: 'e30' } };
    const unknown = await api('POST', '/api/v1/auth/webauthn/authentication/finish', {
      body: { challenge_id: '00000000-0000-7000-8000-000000000000', response: fake },
    });
    expect(unknown.status).toBe(401);
    const spent = await api('POST', '/api/v1/auth/webauthn/authentication/finish', { body: { challenge_id: begun.body.data.challenge_id, response: fake } });
    expect(spent.status).toBe(401);
    expect((await api('POST', '/api/v1/auth/webauthn/authentication/begin', { body: { email: 'x@example.test' } })).status).toBe(400);
    expect((await api('POST', '/api/v1/auth/webauthn/authentication/finish', { body: { challenge_id: begun.body.data.challenge_id } })).status).toBe(400);
  });

  it('GET /api/v1/webauthn/credentials: 401 without credentials, 403 without a session or admin:*', async () => {
    expect((await api('GET', '/api/v1/webauthn/credentials')).status).toBe(401);
    const narrow = await api('GET', '/api/v1/webauthn/credentials', { key: await a.key(['secrets:read']) });
    expect(narrow.status).toBe(403);
    expect(errorCode(narrow)).toBe('insufficient_scope');
    const other = await api('GET', '/api/v1/webauthn/credentials', { key: b.adminKey });
    expect(other.body.data.credentials).toEqual([]);
  });

  it('a user without admin:* sees and deletes only its own passkeys', async () => {
    const { useRuntimeConfig } = await import('../helpers/in-process.js');
    useRuntimeConfig();
    const { db, tableName } = await import('../../lib/store/client.js');
    const { keys } = await import('../../lib/store/keys.js');
    const { PutCommand } = await import('@aws-sdk/lib-dynamodb');
    const email = 'viewer@example.test';
    await db().send(
      new PutCommand({ TableName: tableName(), Item: { ...keys.user(a.tenantId, email), email, role: 'viewer', created_at: new Date().toISOString() } }),
    );
    const viewer = await librarySession(a.tenantId, email);
    expect(viewer.scope).not.toContain('admin:*');
    const mine = await api('GET', '/api/v1/webauthn/credentials', { key: viewer.access_token });
    expect(mine.status, mine.text).toBe(200);
    expect(mine.body.data).toEqual({ credentials: [], total: 0 });
    expect((await api('DELETE', '/api/v1/webauthn/credentials/AAAAAAAAAAAAAAAAAAAAAA', { key: viewer.access_token })).status).toBe(404);
  });
});

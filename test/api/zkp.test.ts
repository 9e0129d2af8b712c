import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as srp from 'secure-remote-password/client.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api, baseUrl, canary, errorCode, newAccount, rootKey, type TestAccount } from '../helpers/api.js';
import { findLeaks } from '../helpers/leaks.js';
import { admitted, refresh, type Tokens } from './sign-in.helpers.js';
import { launchChromium, requireChromium } from '../helpers/browser.js';

/**
 * Zero-knowledge passwords: the client is the `secure-remote-password` npm package, an SRP-6a
 * implementation the service does not use (its server side is lib/users/srp.ts on BigInt and
 * @noble/hashes). What crosses the wire is salt, verifier, A, M1 (client) and B, M2 (server):
 * the password (a canary) and x never do, and the leak scan proves none reached the table or
 * the log.
 */
let a: TestAccount;
let b: TestAccount;
const password = canary('srp-password');
/** Reset tokens and refresh tokens handed out, and every password-derived secret: none may be stored or logged. */
const secrets: string[] = [password];

async function reset(account: TestAccount, email = account.adminEmail) {
  const res = await api('POST', '/api/v1/admin/users/reset-password', { key: rootKey(), body: { tenant_id: account.tenantId, email } });
  expect(res.status, res.text).toBe(200);
  expect(res.body.data.sessions_ended).toEqual(expect.any(Number));
  secrets.push(res.body.data.reset_token);
  return res.body.data.reset_token as string;
}

function registration(email: string, pw: string) {
  const salt = srp.generateSalt();
  const x = srp.derivePrivateKey(salt, email, pw);
  const verifier = srp.deriveVerifier(x);
  secrets.push(x, verifier);
  return { salt, verifier };
}

/** The two-step proof with the independent client; returns the last answer and whether the server's proof checked out. */
async function signIn(account: TestAccount, email: string, pw: string) {
  const eph = srp.generateEphemeral();
  secrets.push(eph.secret);
  const step1 = await api('POST', '/api/v1/auth/zkp/verify', { body: { tenant_id: account.tenantId, email, client_public: eph.public } });
  expect(step1.status, step1.text).toBe(200);
  const { challenge_id, salt, server_public } = step1.body.data;
  const x = srp.derivePrivateKey(salt, email, pw);
  const session = srp.deriveSession(eph.secret, server_public, salt, email, x);
  secrets.push(session.key);
  const step2 = await api('POST', '/api/v1/auth/zkp/verify', { body: { challenge_id, client_proof: session.proof } });
  let serverProved = false;
  if (step2.status === 200) {
    srp.verifySession(eph.public, session, step2.body.data.server_proof);
    serverProved = true;
    secrets.push(step2.body.data.refresh_token);
  }
  return { step1, step2, serverProved, challenge_id, proof: session.proof };
}

/**
 * The strict RFC 5054 client: test/api/clients/srp_rfc5054.py, written from RFC 5054 and
 * RFC 2945 on Python's standard library (k = H(N | PAD(g))), sharing no code with the service.
 */
const PY_CLIENT = join(import.meta.dirname, 'clients', 'srp_rfc5054.py');
async function python(args: string[], pw: string): Promise<Record<string, unknown>> {
  const run = promisify(execFile)('python3', [PY_CLIENT, ...args], { timeout: 60_000 });
  run.child.stdin!.end(pw);
  const { stdout } = await run;
  return JSON.parse(stdout);
}
const rfcRegister = (account: TestAccount, email: string, token: string, pw: string) =>
  python(['register', baseUrl(), account.tenantId, email, token], pw);
const rfcSignIn = (account: TestAccount, email: string, pw: string) => python(['signin', baseUrl(), account.tenantId, email], pw);

beforeAll(async () => {
  [a, b] = await Promise.all([newAccount('zkp'), newAccount('zkp-b')]);
});

describe('SRP-6a register + verify', () => {
  it('an independent SRP client registers with a reset token, signs in, and checks the server proof', async () => {
    const token = await reset(a);
    const reg = await api('POST', '/api/v1/auth/zkp/register', {
      body: { tenant_id: a.tenantId, email: a.adminEmail, reset_token: token, ...registration(a.adminEmail, password) },
    });
    expect(reg.status, reg.text).toBe(201);
    expect(reg.body.data).toEqual({ registered: true, email: a.adminEmail, srp_version: 1 });

    const ok = await signIn(a, a.adminEmail, password);
    expect(ok.step2.status, ok.step2.text).toBe(200);
    expect(ok.serverProved).toBe(true);
    const tokens = ok.step2.body.data as Tokens;
    expect(tokens.scope).toBe('admin:*');
    expect(await admitted(tokens.access_token)).toBe(true);
    const rotated = await refresh(tokens.refresh_token);
    expect(rotated.status).toBe(200);
    secrets.push(rotated.body.data.refresh_token);

    // the challenge is single use: the same proof again is refused
    const again = await api('POST', '/api/v1/auth/zkp/verify', { body: { challenge_id: ok.challenge_id, client_proof: ok.proof } });
    expect(again.status).toBe(401);
    expect(errorCode(again)).toBe('sign_in_failed');

    // the reset token was spent by the registration
    const replay = await api('POST', '/api/v1/auth/zkp/register', {
      body: { tenant_id: a.tenantId, email: a.adminEmail, reset_token: token, ...registration(a.adminEmail, 'x') },
    });
    expect(replay.status).toBe(401);

    const users = await api('GET', `/api/v1/admin/tenants/${a.tenantId}/users`, { key: rootKey() });
    expect(users.body.data.users[0]).toMatchObject({ email: a.adminEmail, password: true });
  });

  it('a wrong password fails; an unknown user gets a decoy challenge that fails the same way', async () => {
    const wrong = await signIn(a, a.adminEmail, `${password}-not`);
    expect(wrong.step2.status).toBe(401);
    expect(errorCode(wrong.step2)).toBe('sign_in_failed');

    const ghost = 'nobody@example.test';
    const first = await signIn(a, ghost, 'whatever');
    expect(first.step2.status).toBe(401);
    const second = await signIn(a, ghost, 'whatever');
    expect(second.step1.body.data.salt).toBe(first.step1.body.data.salt);
    // another account's user is unknown here too
    const cross = await signIn(b, a.adminEmail, password);
    expect(cross.step2.status).toBe(401);
  });

  it('a user changes its own password in its session; API keys and other users cannot', async () => {
    const pw2 = canary('srp-password-2');
    secrets.push(pw2);
    const session = (await signIn(a, a.adminEmail, password)).step2.body.data as Tokens;
    const change = await api('POST', '/api/v1/auth/zkp/register', {
      key: session.access_token,
      body: { tenant_id: a.tenantId, email: a.adminEmail, ...registration(a.adminEmail, pw2) },
    });
    expect(change.status, change.text).toBe(201);
    expect((await signIn(a, a.adminEmail, password)).step2.status).toBe(401);
    expect((await signIn(a, a.adminEmail, pw2)).step2.status).toBe(200);

    const byKey = await api('POST', '/api/v1/auth/zkp/register', { key: a.adminKey, body: { tenant_id: a.tenantId, email: a.adminEmail, ...registration(a.adminEmail, 'k') } });
    expect(byKey.status).toBe(403);
    const otherUser = await api('POST', '/api/v1/auth/zkp/register', {
      key: session.access_token,
      body: { tenant_id: a.tenantId, email: 'someone@example.test', ...registration('someone@example.test', 'k') },
    });
    expect(otherUser.status).toBe(403);
    const otherAccount = await api('POST', '/api/v1/auth/zkp/register', {
      key: session.access_token,
      body: { tenant_id: b.tenantId, email: a.adminEmail, ...registration(a.adminEmail, 'k') },
    });
    expect(otherAccount.status).toBe(404);
  });

  it('401 without a reset token or session, 400 on malformed values', async () => {
    const none = await api('POST', '/api/v1/auth/zkp/register', { body: { tenant_id: a.tenantId, email: a.adminEmail, ...registration(a.adminEmail, 'n') } });
    expect(none.status).toBe(401);
    const badToken = await api('POST', '/api/v1/auth/zkp/register', {
      key: 'eyJhbGciOiJFUzI1NiJ9.eyJ4IjoxfQ.c2ln',
      body: { tenant_id: a.tenantId, email: a.adminEmail, ...registration(a.adminEmail, 'n') },
    });
    expect(badToken.status).toBe(401);
    const short = await api('POST', '/api/v1/auth/zkp/register', { body: { tenant_id: a.tenantId, email: a.adminEmail, salt: 'ab', verifier: 'cd' } });
    expect(short.status).toBe(400);
    expect(errorCode(short)).toBe('validation_failed');
    const zero = await api('POST', '/api/v1/auth/zkp/register', {
      body: { tenant_id: a.tenantId, email: a.adminEmail, salt: '0'.repeat(64), verifier: '0'.repeat(512), reset_token: `scpr_${'A'.repeat(43)}` },
    });
    expect(zero.status).toBe(400);
    const zeroA = await api('POST', '/api/v1/auth/zkp/verify', { body: { tenant_id: a.tenantId, email: a.adminEmail, client_public: '0'.repeat(512) } });
    expect(zeroA.status).toBe(400);
    const mixed = await api('POST', '/api/v1/auth/zkp/verify', { body: { tenant_id: a.tenantId, client_proof: '0'.repeat(64) } });
    expect(mixed.status).toBe(400);
  });
});

describe('SRP versions: RFC 5054 (srp_version 2) next to the earlier convention (1)', () => {
  it('a strict RFC 5054 client (Python, from the RFCs) registers with srp_version 2, signs in and checks the server proof; the version-1 handshake is then refused', async () => {
    const e = await newAccount('zkp-rfc');
    const pw = canary('srp-password-rfc');
    secrets.push(pw);
    const token = await reset(e);
    const reg = await rfcRegister(e, e.adminEmail, token, pw);
    expect(reg, 'POST /api/v1/auth/zkp/register from the RFC 5054 client').toMatchObject({ status: 201, body: { data: { srp_version: 2 } } });

    const rfc = await rfcSignIn(e, e.adminEmail, pw);
    expect(rfc, 'POST /api/v1/auth/zkp/verify from the RFC 5054 client').toMatchObject({ step: 2, status: 200, server_proved: true, srp_version: 2 });
    expect(await admitted(rfc.access_token as string)).toBe(true);
    const wrong = await rfcSignIn(e, e.adminEmail, `${pw}-not`);
    expect(wrong).toMatchObject({ step: 2, status: 401, body: { code: 'sign_in_failed' } });

    // the earlier convention (k with g as one byte) no longer signs in to a version-2 verifier
    const legacy = await signIn(e, e.adminEmail, pw);
    expect(legacy.step1.body.data.srp_version).toBe(1);
    expect(legacy.step2.status, 'a version-1 handshake against a verifier registered as version 2').toBe(401);
    expect(errorCode(legacy.step2)).toBe('sign_in_failed');
  });

  it('an existing version-1 verifier keeps signing in with the old k, and the RFC 5054 client signs in with it too (no lost logins)', async () => {
    const f = await newAccount('zkp-v1');
    const token = await reset(f);
    const reg = await api('POST', '/api/v1/auth/zkp/register', {
      body: { tenant_id: f.tenantId, email: f.adminEmail, reset_token: token, ...registration(f.adminEmail, password) },
    });
    expect(reg.body.data.srp_version).toBe(1);
    const old = await signIn(f, f.adminEmail, password);
    expect(old.step2.status, old.step2.text).toBe(200);
    expect(old.serverProved).toBe(true);
    expect(await rfcSignIn(f, f.adminEmail, password), 'the RFC 5054 client with a version-1 verifier').toMatchObject({
      step: 2,
      status: 200,
      server_proved: true,
    });
  });

  it('400 on an unknown srp_version', async () => {
    const eph = srp.generateEphemeral();
    const bad = await api('POST', '/api/v1/auth/zkp/verify', { body: { tenant_id: a.tenantId, email: a.adminEmail, client_public: eph.public, srp_version: 3 } });
    expect(bad.status).toBe(400);
    const badReg = await api('POST', '/api/v1/auth/zkp/register', {
      body: { tenant_id: a.tenantId, email: a.adminEmail, ...registration(a.adminEmail, 'n'), reset_token: `scpr_${'A'.repeat(43)}`, srp_version: 0 },
    });
    expect(badReg.status).toBe(400);
  });
});


describe('the sign-in page computes SRP in Chromium (RFC 5054): the password never leaves the browser', () => {
  it('sets a first password with a reset token and signs in; signs in again; a wrong password fails; the RFC 5054 client signs in with the verifier the page made', async () => {
    requireChromium();
    const g = await newAccount('zkp-page');
    const pw = canary('srp-password-page');
    secrets.push(pw);
    const token = await reset(g);
    const browser = await launchChromium();
    const sent: string[] = [];
    try {
      const page = await browser.newPage();
      page.on('request', (r) => sent.push(`${r.method()} ${r.url()} ${r.postData() ?? ''}`));
      const fill = async (resetToken: string, password: string) => {
        await page.goto(`${baseUrl()}/api/v1/auth/oidc/login`);
        await page.waitForSelector('body[data-state="ready"]');
        await page.fill('#account', g.tenantId);
        await page.fill('#email', g.adminEmail);
        await page.fill('#password', password);
        if (resetToken) await page.fill('#reset_token', resetToken);
      };
      const outcome = async (button: string) => {
        await page.click(button);
        await page.waitForFunction(() => document.body.dataset.state !== 'ready', undefined, { timeout: 30_000 });
        return [await page.getAttribute('body', 'data-state'), await page.textContent('#status')];
      };
      await fill(token, pw);
      const [set, setStatus] = await outcome('#password-set');
      expect(set, `the page's "Set this password and sign in" (POST /api/v1/auth/zkp/register, then /zkp/verify): ${setStatus}`).toBe('signed-in');
      expect(setStatus).toMatch(`Signed in as ${g.adminEmail}`);
      const session = JSON.parse((await page.evaluate(() => sessionStorage.getItem('session')))!) as Tokens;
      expect(await admitted(session.access_token)).toBe(true);

      await fill('', pw);
      const [again, againStatus] = await outcome('#password-signin');
      expect(again, `the page's password sign-in (POST /api/v1/auth/zkp/verify): ${againStatus}`).toBe('signed-in');

      await fill('', `${pw}-not`);
      const [wrong, wrongStatus] = await outcome('#password-signin');
      expect(wrong).toBe('failed');
      expect(wrongStatus).toBe('Password sign-in failed: the password proof was refused: start again with a new challenge');
    } finally {
      await browser.close();
    }
    const srpCalls = sent.filter((r) => r.includes('/auth/zkp/'));
    expect(srpCalls.some((r) => r.includes('"srp_version":2') && r.includes('/auth/zkp/register'))).toBe(true);
    expect(srpCalls.filter((r) => r.includes('"client_public"')).every((r) => r.includes('"srp_version":2'))).toBe(true);
    expect(sent.filter((r) => r.includes(pw)), 'no request from the page carries the password').toEqual([]);
    // the verifier the page registered is an RFC 5054 one: the independent client signs in with it
    expect(await rfcSignIn(g, g.adminEmail, pw), 'the RFC 5054 client with the page’s verifier').toMatchObject({ step: 2, status: 200, server_proved: true });
  });
});

describe('SRP edge cases', () => {
  it('a reset token used twice at once is spent once; a proof after a reset fails; an unknown account gets a decoy', async () => {
    const c = await newAccount('zkp-c');
    const token = await reset(c);
    const body = () => ({ tenant_id: c.tenantId, email: c.adminEmail, reset_token: token, ...registration(c.adminEmail, password) });
    const both = await Promise.all([api('POST', '/api/v1/auth/zkp/register', { body: body() }), api('POST', '/api/v1/auth/zkp/register', { body: body() })]);
    expect(both.map((r) => r.status).sort()).toEqual([201, 401]);

    // step 1, then the operator resets the password, then step 2: refused
    const eph = srp.generateEphemeral();
    const step1 = await api('POST', '/api/v1/auth/zkp/verify', { body: { tenant_id: c.tenantId, email: c.adminEmail, client_public: eph.public } });
    await reset(c);
    const { challenge_id, salt, server_public } = step1.body.data;
    const session = srp.deriveSession(eph.secret, server_public, salt, c.adminEmail, srp.derivePrivateKey(salt, c.adminEmail, password));
    const step2 = await api('POST', '/api/v1/auth/zkp/verify', { body: { challenge_id, client_proof: session.proof } });
    expect(step2.status).toBe(401);

    const ghost = await api('POST', '/api/v1/auth/zkp/verify', {
      body: { tenant_id: '00000000-0000-7000-8000-000000000000', email: c.adminEmail, client_public: eph.public },
    });
    expect(ghost.status).toBe(200);
    expect(ghost.body.data.salt).toMatch(/^[0-9a-f]{64}$/);
  });

  it('a suspended account neither sets passwords nor signs in', async () => {
    const d = await newAccount('zkp-d');
    const token = await reset(d);
    await api('POST', '/api/v1/auth/zkp/register', { body: { tenant_id: d.tenantId, email: d.adminEmail, reset_token: token, ...registration(d.adminEmail, password) } });
    const token2 = await reset(d);
    expect((await api('PATCH', `/api/v1/admin/tenants/${d.tenantId}/suspend`, { key: rootKey() })).status).toBe(200);
    const reg = await api('POST', '/api/v1/auth/zkp/register', {
      body: { tenant_id: d.tenantId, email: d.adminEmail, reset_token: token2, ...registration(d.adminEmail, password) },
    });
    expect(reg.status).toBe(403);
    expect(errorCode(reg)).toBe('tenant_suspended');
  });
});

describe('POST /api/v1/admin/users/reset-password', () => {
  it('removes the verifier at once, returns a single-use token once, and audits it in the user\u2019s account', async () => {
    const pw = canary('srp-password-b');
    secrets.push(pw);
    const t1 = await reset(b);
    expect(t1).toMatch(/^scpr_/);
    await api('POST', '/api/v1/auth/zkp/register', { body: { tenant_id: b.tenantId, email: b.adminEmail, reset_token: t1, ...registration(b.adminEmail, pw) } });
    const session = (await signIn(b, b.adminEmail, pw)).step2;
    expect(session.status).toBe(200);
    const open = session.body.data as Tokens;
    expect(await admitted(open.access_token)).toBe(true);
    const t2 = await reset(b);
    expect(t2).not.toBe(t1);
    expect((await signIn(b, b.adminEmail, pw)).step2.status).toBe(401);
    // the sessions the old password opened end with the reset: access and refresh tokens alike
    expect(await admitted(open.access_token)).toBe(false);
    expect((await refresh(open.refresh_token)).status).toBe(401);
    const audit = await api('GET', '/api/v1/audit/logs?limit=50', { key: b.adminKey });
    const entry = (audit.body.data.entries as { action: string; actor: { type: string } }[]).find((e) => e.action === 'user.password_reset');
    expect(entry?.actor.type).toBe('operator');
    expect(audit.text).not.toContain(t2);
  });

  it('401, 403 for a non-operator, 404 for an unknown user or account, 400 on a malformed body', async () => {
    const body = { tenant_id: a.tenantId, email: a.adminEmail };
    expect((await api('POST', '/api/v1/admin/users/reset-password', { body })).status).toBe(401);
    const notOp = await api('POST', '/api/v1/admin/users/reset-password', { key: a.adminKey, body });
    expect(notOp.status).toBe(403);
    expect(errorCode(notOp)).toBe('operator_required');
    const noUser = await api('POST', '/api/v1/admin/users/reset-password', { key: rootKey(), body: { tenant_id: a.tenantId, email: b.adminEmail } });
    expect(noUser.status).toBe(404);
    const noAcct = await api('POST', '/api/v1/admin/users/reset-password', {
      key: rootKey(),
      body: { tenant_id: '00000000-0000-7000-8000-000000000000', email: a.adminEmail },
    });
    expect(noAcct.status).toBe(404);
    expect((await api('POST', '/api/v1/admin/users/reset-password', { key: rootKey(), body: { tenant_id: a.tenantId } })).status).toBe(400);
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

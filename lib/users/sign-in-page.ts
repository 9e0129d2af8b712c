import { createHash } from 'node:crypto';
import { N_2048_HEX } from './srp.js';

/**
 * The sign-in page (GET /api/v1/auth/oidc/login without an account): plain HTML and one
 * small script, no framework. A person names the account, then signs in with the
 * account's identity provider (the browser goes to the login route, which redirects to the
 * provider), with a passkey (WebAuthn through the /api/v1/auth/webauthn routes) or with a
 * password: SRP-6a computed in the page (RFC 5054, `srp_version: 2`, lib/users/srp.ts's
 * formulas on BigInt and WebCrypto's SHA-256), so the password never leaves the browser; the
 * same form sets a password with a reset token (the first one, or after an operator's
 * reset) or in the person's session, and signs in with it; a signed
 * in person can add a passkey, and approve or deny a CLI login (lib/users/cli-login.ts): the
 * CLI sends the person here with `?user_code=…`; the page shows the code to compare with the
 * terminal's and decides with `GET /api/v1/auth/cli/login?user_code=…&decision=…` and the
 * session's access token in the Authorization header (never a cookie: CSRF-safe). The session's tokens stay in the tab's sessionStorage. The
 * page's Content-Security-Policy admits exactly this script (by its hash) and requests to
 * this origin.
 */
const SCRIPT = `
const $ = (id) => document.getElementById(id);
const api = '/api/v1';
const say = (text) => { $('status').textContent = text; };
async function post(path, body, token) {
  const headers = { 'content-type': 'application/json' };
  if (token) headers.authorization = 'Bearer ' + token;
  const res = await fetch(api + path, { method: 'POST', headers, body: JSON.stringify(body) });
  const json = await res.json();
  if (!res.ok) throw new Error(json.error || ('HTTP ' + res.status));
  return json.data;
}
// SRP-6a, RFC 5054 (srp_version 2): the formulas of lib/users/srp.ts
const SRP_N = BigInt('0x${N_2048_HEX}');
const SRP_G = 2n;
const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
const unhex = (h) => Uint8Array.from(h.match(/../g), (b) => parseInt(b, 16));
const pad = (n) => unhex(n.toString(16).padStart(512, '0'));
const big = (bytes) => BigInt('0x' + hex(bytes));
const random = (n) => crypto.getRandomValues(new Uint8Array(n));
async function H(...parts) {
  const bytes = parts.map((p) => (typeof p === 'string' ? new TextEncoder().encode(p) : p));
  const all = new Uint8Array(bytes.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const b of bytes) { all.set(b, at); at += b.length; }
  return new Uint8Array(await crypto.subtle.digest('SHA-256', all));
}
function modPow(base, exp, m) {
  let r = 1n; let b = base % m; let e = exp;
  while (e > 0n) { if (e & 1n) r = (r * b) % m; b = (b * b) % m; e >>= 1n; }
  return r;
}
const srpX = async (saltHex, email, password) => big(await H(unhex(saltHex), await H(email + ':' + password)));
function credentials() {
  const email = $('email').value.trim();
  const password = $('password').value;
  if (!email || !password) throw new Error('enter your e-mail and password');
  return { tenant: $('account').value.trim(), email, password };
}
async function passwordSignIn() {
  const { tenant, email, password } = credentials();
  const a = big(random(32));
  const A = modPow(SRP_G, a, SRP_N);
  const step1 = await post('/auth/zkp/verify', { tenant_id: tenant, email, client_public: hex(pad(A)), srp_version: 2 });
  const B = BigInt('0x' + step1.server_public);
  if (B % SRP_N === 0n) throw new Error('the server sent an invalid value');
  const u = big(await H(pad(A), pad(B)));
  const k = big(await H(pad(SRP_N), pad(SRP_G)));
  const x = await srpX(step1.salt, email, password);
  const S = modPow((((B - k * modPow(SRP_G, x, SRP_N)) % SRP_N) + SRP_N) % SRP_N, a + u * x, SRP_N);
  const K = await H(pad(S));
  const hn = await H(pad(SRP_N));
  const hg = await H(Uint8Array.of(2));
  const M1 = await H(hn.map((b, i) => b ^ hg[i]), await H(email), unhex(step1.salt), pad(A), pad(B), K);
  const done = await post('/auth/zkp/verify', { challenge_id: step1.challenge_id, client_proof: hex(M1) });
  if (done.server_proof.toLowerCase() !== hex(await H(pad(A), M1, K))) throw new Error('the server could not prove it knows your password');
  signedIn({ ...done, email });
}
async function setPassword() {
  const { tenant, email, password } = credentials();
  const salt = hex(random(32));
  const verifier = hex(pad(modPow(SRP_G, await srpX(salt, email, password), SRP_N)));
  const resetToken = $('reset_token').value.trim();
  const body = { tenant_id: tenant, email, salt, verifier, srp_version: 2 };
  if (resetToken) body.reset_token = resetToken;
  await post('/auth/zkp/register', body, resetToken ? undefined : $('token').value.trim());
  $('reset_token').value = '';
}
$('password-signin').addEventListener('click', async () => {
  try { await passwordSignIn(); } catch (e) { say('Password sign-in failed: ' + e.message); document.body.dataset.state = 'failed'; }
});
$('password-set').addEventListener('click', async () => {
  try { await setPassword(); await passwordSignIn(); } catch (e) { say('Setting the password failed: ' + e.message); document.body.dataset.state = 'failed'; }
});
function signedIn(data) {
  sessionStorage.setItem('session', JSON.stringify(data));
  $('token').value = data.access_token;
  say('Signed in as ' + data.email + ' (session ' + data.session_id + ')');
  document.body.dataset.state = 'signed-in';
  if (document.body.dataset.resume === 'true') location.reload();
}
if (document.body.dataset.account) $('account').value = document.body.dataset.account;
$('sso').addEventListener('click', () => {
  location.assign(api + '/auth/oidc/login?tenant_id=' + encodeURIComponent($('account').value.trim()));
});
$('passkey').addEventListener('click', async () => {
  try {
    const begin = await post('/auth/webauthn/authentication/begin', { tenant_id: $('account').value.trim() });
    const credential = await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(begin.options) });
    signedIn(await post('/auth/webauthn/authentication/finish', { challenge_id: begin.challenge_id, response: credential.toJSON() }));
  } catch (e) { say('Passkey sign-in failed: ' + e.message); document.body.dataset.state = 'failed'; }
});
async function decideCli(decision) {
  try {
    const token = $('token').value.trim();
    const query = new URLSearchParams({ user_code: $('user_code').value.trim(), decision });
    const res = await fetch(api + '/auth/cli/login?' + query, { headers: { authorization: 'Bearer ' + token } });
    const json = await res.json();
    if (!res.ok) throw new Error(json.error_description || json.error || ('HTTP ' + res.status));
    say(decision === 'approve' ? 'CLI login approved: return to your terminal.' : 'CLI login denied.');
    document.body.dataset.state = 'cli-' + json.status;
  } catch (e) { say('CLI login failed: ' + e.message); document.body.dataset.state = 'failed'; }
}
$('user_code').value = new URLSearchParams(location.search).get('user_code') || '';
$('cli-approve').addEventListener('click', () => decideCli('approve'));
$('cli-deny').addEventListener('click', () => decideCli('deny'));
$('register').addEventListener('click', async () => {
  try {
    const token = $('token').value.trim();
    const begin = await post('/auth/webauthn/registration/begin', {}, token);
    const credential = await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(begin.options) });
    const done = await post('/auth/webauthn/registration/finish', { challenge_id: begin.challenge_id, response: credential.toJSON(), name: $('name').value.trim() || undefined }, token);
    say('Passkey registered: ' + done.credential.id);
    document.body.dataset.state = 'registered';
  } catch (e) { say('Passkey registration failed: ' + e.message); document.body.dataset.state = 'failed'; }
});
`;

const SCRIPT_HASH = createHash('sha256').update(SCRIPT).digest('base64');

const HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in</title>
</head>
<body data-state="ready"__ATTRS__>
<main>
<h1>Sign in</h1>
<p><label>Account id <input id="account" autocomplete="off" size="40"></label></p>
<p><button id="sso" type="button">Sign in with your organisation (SSO)</button>
<button id="passkey" type="button">Sign in with a passkey</button></p>
<h2>Sign in with a password</h2>
<p><label>E-mail <input id="email" type="email" autocomplete="username" size="30"></label>
<label>Password <input id="password" type="password" autocomplete="current-password"></label>
<button id="password-signin" type="button">Sign in with your password</button></p>
<p>No password yet, or an operator reset it? Paste the reset token (<code>scpr_…</code>) you were given, choose a password above, then:
<label>Reset token <input id="reset_token" autocomplete="off" size="40"></label>
<button id="password-set" type="button">Set this password and sign in</button>
(signed in, leave the reset token empty to change your password)</p>
<h2>Add a passkey</h2>
<p><label>Access token <input id="token" autocomplete="off" size="40"></label>
<label>Name <input id="name" autocomplete="off"></label>
<button id="register" type="button">Register a passkey</button></p>
<h2>Approve a CLI login</h2>
<p>Sign in first, then check that this code is the one your terminal shows.</p>
<p><label>Code <input id="user_code" autocomplete="off" size="12"></label>
<button id="cli-approve" type="button">Approve</button>
<button id="cli-deny" type="button">Deny</button></p>
<p id="status" role="status"></p>
</main>
<script>${SCRIPT}</script>
</body>
</html>
`;

const attr = (v: string) => v.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/**
 * The page; `resume` (the authorization endpoint answers it to a person without a session):
 * the account is filled in, and once signed in (the sign-in route set the session cookie)
 * the page loads its own address again, which continues the authorization request.
 */
export const signInPage = (resume?: { account: string }): { html: string; headers: Record<string, string> } => ({
  html: HTML.replace('__ATTRS__', resume ? ` data-resume="true" data-account="${attr(resume.account)}"` : ''),
  headers: {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy': `default-src 'none'; script-src 'sha256-${SCRIPT_HASH}'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
  },
});

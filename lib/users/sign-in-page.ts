import { createHash } from 'node:crypto';

/**
 * The sign-in page (GET /api/v1/auth/oidc/login without an account): plain HTML and one
 * small script, no framework. A person names the account, then signs in with the
 * account's identity provider (the browser goes to the login route, which redirects to the
 * provider) or with a passkey (WebAuthn through the /api/v1/auth/webauthn routes); a signed
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

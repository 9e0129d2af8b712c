/**
 * The consent page of the authorization endpoint: plain HTML, no script. Its form sends the
 * authorization request again (GET, same address) with the single-use consent ticket and the
 * person's decision; the ticket is bound to the session, the person and the request, so no
 * other page can decide for them (the cookie alone, sent on any top-level GET, is not enough).
 */
const esc = (v: string) => v.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function consentPage(c: { client: string; user: string; scopes: string[]; ticket: string; params: Record<string, string> }): {
  html: string;
  headers: Record<string, string>;
} {
  const hidden = Object.entries({ ...c.params, ticket: c.ticket })
    .map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`)
    .join('\n');
  const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Allow access?</title></head>
<body data-state="consent">
<main>
<h1>Allow ${esc(c.client)} to act for you?</h1>
<p>Signed in as ${esc(c.user)}. The application asks for:</p>
<ul id="scopes">${c.scopes.map((s) => `<li>${esc(s)}</li>`).join('')}</ul>
<form method="get" action="/api/v1/auth/oauth/authorize">
${hidden}
<button id="allow" type="submit" name="decision" value="allow">Allow</button>
<button id="deny" type="submit" name="decision" value="deny">Deny</button>
</form>
</main>
</body>
</html>
`;
  return {
    html,
    headers: {
      'Content-Type': 'text/html; charset=utf-8',
      // form-action also governs the redirect that answers the form: the client's origin
      'Content-Security-Policy': `default-src 'none'; form-action 'self' ${new URL(c.params.redirect_uri!).origin}; base-uri 'none'; frame-ancestors 'none'`,
    },
  };
}

/** The page of an RP-initiated logout without a redirect: plain HTML, no script. */
export function signedOutPage(): { html: string; headers: Record<string, string> } {
  return {
    html: `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Signed out</title></head>
<body data-state="signed-out"><main><h1>You are signed out</h1><p>You can close this window.</p></main></body>
</html>
`,
    headers: { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': "default-src 'none'; base-uri 'none'; frame-ancestors 'none'" },
  };
}

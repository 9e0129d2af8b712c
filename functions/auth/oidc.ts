import * as z from 'zod/v4';
import { ok, defineHandler, type Reply } from '../../lib/http/index.js';
import { Uuid } from '../../lib/schemas.js';
import { callbackUrl, finishLogin, linkingPerson, startLogin } from '../../lib/sso/oidc.js';
import { requestFacts } from '../../lib/users/sessions.js';
import { SignedIn } from '../../lib/users/schemas.js';
import { signInPage } from '../../lib/users/sign-in-page.js';
import { sessionCookie } from '../../lib/auth/authorization-server.js';

/** `user_code`: a CLI login to approve (lib/users/cli-login.ts); the sign-in page reads it from its own URL. */
const LoginQuery = z.strictObject({ tenant_id: Uuid.optional(), user_code: z.string().max(32).optional(), link: z.literal('true').optional() });
const CallbackQuery = z.strictObject({
  code: z.string().min(1).max(2048),
  state: z.string().min(16).max(512),
  iss: z.string().max(512).optional(),
  session_state: z.string().max(512).optional(),
});

/** Without an account: the sign-in page. With `tenant_id`: a redirect (302) to the account's identity provider. */
export const login = defineHandler({
  summary: 'Start single sign-on',
  description:
    'Without `tenant_id`: the sign-in page (HTML). With it: a redirect (302) to the account’s OpenID Connect provider. With `link=true` as well, the explicit step that links the provider\u2019s identity to the user signed in in this browser (the `sc_session` cookie of a user of the account, else 401 `sign_in_required`): the callback then, in the same browser and session, binds the identity (issuer and `sub`) to that user if the provider vouches for the same e-mail address; from then on that identity signs in as the user, with the user\u2019s own scopes.',
  responses: { 200: null, 302: null },
  media: { 200: ['text/html'] },
  errors: ['not_found', 'tenant_suspended', 'idp_failed', 'sign_in_required'],
  query: LoginQuery,
  async handler({ query, headers }): Promise<Reply> {
    if (!query.tenant_id) {
      const page = signInPage();
      return { status: 200, data: null, raw: page.html, headers: page.headers };
    }
    const link = query.link ? await linkingPerson(query.tenant_id, headers) : undefined;
    const { url } = await startLogin(query.tenant_id, callbackUrl(headers), link);
    return { status: 302, data: null, raw: '', headers: { Location: url } };
  },
});

/** The provider's redirect back: the code is exchanged, the ID token validated and a session opened. */
export const callback = defineHandler({
  summary: 'Finish single sign-on',
  description:
    'The identity provider’s redirect back: the code is exchanged, the ID token validated (issuer, audience, nonce, signature), the person\u2019s claims read from the provider\u2019s userinfo endpoint when the ID token lacks them (OpenID Connect Core \u00a75.4 defaults; its `sub` must be the ID token\u2019s) and a session opened for a verified e-mail address (`email_verified: true`) of an admitted domain. The state is single use. An e-mail address of a user single sign-on did not create (a password or passkey user, another identity\u2019s) is 409 `sso_identity_conflict`, never taken over.',
  responses: { 200: SignedIn },
  errors: ['sign_in_failed', 'idp_failed', 'not_found', 'forbidden', 'tenant_suspended', 'sso_identity_conflict'],
  query: CallbackQuery,
  async handler(input) {
    const session = await finishLogin(input.query.code, input.query.state, requestFacts(input), input.headers);
    return ok(session, { 'Set-Cookie': sessionCookie(session.access_token, session.expires_in, input.headers) });
  },
});

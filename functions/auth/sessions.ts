import * as z from 'zod/v4';
import { defineHandler, ok } from '../../lib/http/index.js';
import { REFRESH_TOKEN_RE, refreshSession, requestFacts, signOut } from '../../lib/users/sessions.js';

const RefreshBody = z.strictObject({
  refresh_token: z.string().regex(REFRESH_TOKEN_RE, 'a refresh token of this service (scr_...) as returned by a sign-in or the last refresh'),
});

/** Rotates the refresh token: a new access token and a new refresh token; the old one is spent. */
export const refresh = defineHandler({
  summary: 'Renew a session\u2019s access token',
  description:
    'Rotates the refresh token: a new access token (15 minutes) and a new refresh token; the old one is spent. Presenting a spent refresh token again ends the whole session (401 refresh_token_reused).',
  body: RefreshBody,
  errors: ['unauthorized', 'refresh_token_reused', 'tenant_suspended'],
  async handler(input) {
    return ok(await refreshSession(input.body.refresh_token, requestFacts(input)));
  },
});

/** Ends the caller's session: its access and refresh tokens are refused from the next request on. */
export const logout = defineHandler({
  async handler({ ctx }) {
    return ok({ signed_out: true, ...(await signOut(ctx)) });
  },
});

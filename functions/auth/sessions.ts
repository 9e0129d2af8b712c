import * as z from 'zod/v4';
import { defineHandler, ok } from '../../lib/http/index.js';
import { NoFieldsBody } from '../../lib/schemas.js';
import { SessionTokensSchema, SignedOut } from '../../lib/users/schemas.js';
import { REFRESH_TOKEN_RE, refreshSession, requestFacts, requireSessionToken, signOut } from '../../lib/users/sessions.js';

const RefreshBody = z.strictObject({
  refresh_token: z.string().regex(REFRESH_TOKEN_RE, 'a refresh token of this service (scr_...) as returned by a sign-in or the last refresh'),
});

/** Rotates the refresh token: a new access token and a new refresh token; the old one is spent. */
export const refresh = defineHandler({
  summary: 'Refresh a session',
  description:
    'Rotates the refresh token: a new access token (15 minutes) and a new refresh token; the old refresh token is spent. Presenting a spent one ends the whole session (401 `refresh_token_reused`), except a retry within 30 s while the new refresh token is unused (an answer lost): it gets that same new refresh token again.',
  responses: { 200: SessionTokensSchema },
  body: RefreshBody,
  errors: ['unauthorized', 'invalid_grant', 'refresh_token_reused', 'tenant_suspended'],
  async handler(input) {
    return ok(await refreshSession(input.body.refresh_token, requestFacts(input)));
  },
});

/** Ends the caller's session: its access and refresh tokens are refused from the next request on. */
export const logout = defineHandler({
  summary: 'Sign out',
  description:
    'Ends the caller’s session (a session access token, not an API key): its access and refresh tokens are refused from the next request on.',
  responses: { 200: SignedOut },
  errors: ['forbidden', 'not_found'],
  authorize: requireSessionToken,
  body: NoFieldsBody,
  async handler({ ctx }) {
    return ok({ signed_out: true, ...(await signOut(ctx)) });
  },
});

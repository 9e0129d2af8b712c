import * as z from 'zod/v4';
import { authenticateBearer, bearerIsNotAccessToken } from '../../lib/authn/authenticate.js';
import { ClientIdSchema, DEVICE_CODE_GRANT, DeviceCodeSchema, publicUrl, UserCodeSchema } from '../../lib/auth/device-flow.js';
import type { CallContext } from '../../lib/auth/principal.js';
import { config } from '../../lib/config.js';
import { badRequest, defineHandler, protocol } from '../../lib/http/index.js';
import { forbidden } from '../../lib/core/errors.js';
import { decideCliLogin, pollCliLogin, reviewCliLogin, startCliLogin } from '../../lib/users/cli-login.js';
import { revoke as revokeToken } from '../../lib/oauth/server.js';
import { requestFacts } from '../../lib/users/sessions.js';

/** Answers of the OAuth routes are never cached (RFC 6749 §5.1). */
const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

const LoginQuery = z
  .strictObject({
    client_id: ClientIdSchema.optional(),
    name: z.string().trim().min(1).max(128).optional(),
    user_code: UserCodeSchema.optional(),
    decision: z.enum(['approve', 'deny']).optional(),
  })
  .refine((q) => q.decision === undefined || q.user_code !== undefined, { message: 'decision needs the user_code it decides', path: ['decision'] })
  .refine((q) => q.user_code === undefined || (q.client_id === undefined && q.name === undefined), {
    message: 'client_id and name start a login; with user_code the call reviews or decides one',
    path: ['user_code'],
  });

const DeviceAuthorization = z.object({
  device_code: z.string(),
  user_code: z.string(),
  verification_uri: z.url(),
  verification_uri_complete: z.url(),
  expires_in: z.number().int(),
  interval: z.number().int(),
});

const LoginView = z.object({
  user_code: z.string(),
  status: z.enum(['pending', 'approved', 'denied']),
  client_id: z.string().nullable(),
  name: z.string().nullable(),
  created_at: z.iso.datetime(),
  expires_at: z.iso.datetime(),
});

/** The sign-in page, where the person approves the code. */
const verificationUri = (headers: Readonly<Record<string, string>>) => publicUrl(headers, config().PUBLIC_BASE_URL, '/api/v1/auth/oidc/login');

export const login = defineHandler({
  summary: 'Start a CLI login, or review or decide one from the sign-in page',
  description:
    'Without `user_code` (and without credentials): starts a device-style login (RFC 8628 §3.1) and answers the device authorization response: ' +
    'the CLI shows `user_code` and `verification_uri` (the sign-in page) and polls POST /api/v1/auth/cli/token every `interval` seconds. ' +
    'With `user_code` and `Authorization: Bearer <access token of a sign-in session>`: the signed-in person reviews the pending login ' +
    '(no `decision`) or decides it (`decision=approve|deny`); the CLI session will be this person\u2019s, in this account. ' +
    'Only a sign-in session may decide (403 for an API key). The credential travels in the Authorization header only, so no other site can make a browser decide (no cookies).',
  query: LoginQuery,
  responses: { 200: z.union([DeviceAuthorization, LoginView]) },
  errors: ['not_found', 'forbidden', 'unauthorized'],
  async handler(input) {
    const { query, headers } = input;
    if (query.user_code === undefined) {
      return protocol(await startCliLogin({ client_id: query.client_id, name: query.name }, verificationUri(headers)), NO_STORE);
    }
    // only a sign-in session may review or decide (lib/users/cli-login.ts): an API key or API token
    // is refused before anything is read (this route's execution role reads no credential item;
    // the access token names its account and is checked in that account's session)
    if (bearerIsNotAccessToken(headers))
      throw forbidden('approve a CLI login from your own sign-in session (the sign-in page), not with an API key or token');
    const facts = requestFacts(input);
    const ctx: CallContext = { principal: await authenticateBearer(headers), ...facts };
    const view = query.decision ? await decideCliLogin(ctx, query.user_code, query.decision) : await reviewCliLogin(ctx, query.user_code);
    return protocol(view, NO_STORE);
  },
});

/** RFC 8628 §3.1: `client_id` and `scope` (no scope is granted by it: the approver's session decides), parameters it does not know ignored. */
const StartBody = z.object({
  client_id: ClientIdSchema.optional(),
  scope: z.string().max(4096).optional(),
  name: z.string().trim().min(1).max(128).optional(),
});

/** The device authorization request as RFC 8628 §3.1 sends it: POST, form-encoded. */
export const start = defineHandler({
  summary: 'Start a CLI login (RFC 8628 device authorization request)',
  description:
    'RFC 8628 §3.1 as the RFC sends it (POST, form-encoded or JSON): `client_id` (optional), `scope` (ignored: the session is the approver\u2019s), `name` (optional, shown to the approver). ' +
    'The same device authorization response as GET /api/v1/auth/cli/login without `user_code`; the CLI polls POST /api/v1/auth/cli/token.',
  body: StartBody,
  responses: { 200: DeviceAuthorization },
  errors: ['invalid_request'],
  async handler(input) {
    return protocol(await startCliLogin({ client_id: input.body.client_id, name: input.body.name }, verificationUri(input.headers)), NO_STORE);
  },
});

const TokenBody = z.strictObject({
  grant_type: z.string().max(255),
  device_code: DeviceCodeSchema,
  client_id: ClientIdSchema.optional(),
});

const SessionTokens = z.object({
  token_type: z.literal('Bearer'),
  access_token: z.string(),
  expires_in: z.number().int(),
  refresh_token: z.string(),
  session_id: z.uuid(),
  scope: z.string(),
});

export const token = defineHandler({
  summary: 'Poll for the tokens of a CLI login',
  description:
    'RFC 8628 §3.4 device access token request (form-encoded or JSON): `grant_type=urn:ietf:params:oauth:grant-type:device_code`, `device_code`, and the `client_id` of the login if it named one. ' +
    'Until the person decides: 400 `authorization_pending`, or `slow_down` when polled sooner than the interval (which grows by 5 s). ' +
    'Then 400 `access_denied`, `expired_token` (after 10 minutes) or `invalid_grant` (unknown or used code); once approved, 200 with the tokens of a new sign-in session of the approver, answered once: ' +
    'an access token (15 minutes; renew at POST /api/v1/auth/refresh with the rotating `refresh_token`).',
  body: TokenBody,
  responses: { 200: SessionTokens },
  errors: ['authorization_pending', 'slow_down', 'access_denied', 'expired_token', 'invalid_grant', 'unsupported_grant_type', 'invalid_request'],
  async handler(input) {
    const { body } = input;
    if (body.grant_type !== DEVICE_CODE_GRANT)
      throw badRequest(`this endpoint serves grant_type ${DEVICE_CODE_GRANT} only`, undefined, 'unsupported_grant_type');
    return protocol(await pollCliLogin(body.device_code, body.client_id, requestFacts(input)), NO_STORE);
  },
});

const RevokeBody = z.strictObject({
  token: z.string().min(1).max(4096),
  // RFC 7009 §2.1: a hint the server does not understand is ignored (the token is looked up either way)
  token_type_hint: z.string().max(256).optional(),
  client_id: ClientIdSchema.optional(),
  // the authorization server's clients authenticate as at its token endpoint (RFC 7009 §2.1, lib/oauth/server.ts)
  client_secret: z.string().max(2048).optional(),
  client_assertion_type: z.string().max(2048).optional(),
  client_assertion: z.string().max(8192).optional(),
});

export const revoke = defineHandler({
  summary: 'End a CLI session (token revocation)',
  description:
    'RFC 7009 (form-encoded or JSON): `token` is the session\u2019s refresh token (`scr_…`) or access token; the whole session ends, its every token is refused from the next request on. ' +
    'It is also the authorization server\u2019s `revocation_endpoint`: a client of /api/v1/oidc/clients authenticates as at the token endpoint (client_secret_basic, client_secret_post, private_key_jwt, or a public client by its client_id) and revokes only tokens issued to it; a failed client authentication is 401 `invalid_client`. ' +
    '200 with an empty body whatever the token was (unknown, expired, already revoked, another client\u2019s): the answer tells nothing about the token.',
  body: RevokeBody,
  responses: { 200: null },
  errors: ['invalid_request', 'invalid_client'],
  async handler(input) {
    await revokeToken(input.body, input.headers, requestFacts(input));
    return protocol(null, NO_STORE);
  },
});

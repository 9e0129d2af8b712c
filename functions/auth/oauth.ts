import * as z from 'zod/v4';
import { jwkSetReply } from '../../lib/auth/jwk-set.js';
import { serviceKeySet } from '../../lib/auth/jwt.js';
import { AccountJwks } from '../../lib/certificates/schemas.js';
import { defineHandler, notFound, protocol, type Reply } from '../../lib/http/index.js';
import { consentPage } from '../../lib/oauth/consent-page.js';
import {
  authorize as authorizeRequest,
  bearerOf,
  endSession as endSessionRequest,
  introspect as introspectRequest,
  providerMetadata,
  token as tokenRequest,
  userinfo as userinfoRequest,
} from '../../lib/oauth/server.js';
import { signedOutPage } from '../../lib/oauth/consent-page.js';
import { clearedSessionCookie } from '../../lib/auth/authorization-server.js';
import { requestFacts } from '../../lib/users/sessions.js';
import { signInPage } from '../../lib/users/sign-in-page.js';

const Param = z.string().max(2048).optional();

const Metadata = z.looseObject({
  issuer: z.url(),
  authorization_endpoint: z.url(),
  token_endpoint: z.url(),
  jwks_uri: z.url(),
  response_types_supported: z.array(z.string()),
  grant_types_supported: z.array(z.string()),
  subject_types_supported: z.array(z.string()),
  id_token_signing_alg_values_supported: z.array(z.string()),
  scopes_supported: z.array(z.string()),
  token_endpoint_auth_methods_supported: z.array(z.string()),
  code_challenge_methods_supported: z.array(z.literal('S256')),
});

/** OpenID Provider Metadata of the service's authorization server (one issuer for every account: lib/auth/authorization-server.ts). */
export const discovery = defineHandler({
  summary: 'Discover the authorization server (OpenID Provider Metadata)',
  description:
    'A plain OpenID Connect Discovery 1.0 document: issuer `<base>/api/v1/auth/oauth`, the authorization and token endpoints, PKCE S256, the client authentication methods and the scopes. The account is named by the client_id (`<account id>.<client id>`).',
  responses: { 200: Metadata },
  query: z.strictObject({}),
  async handler({ headers }) {
    return protocol(providerMetadata(headers), { 'Cache-Control': 'public, max-age=300' });
  },
});

/** RFC 8414 §3: the issuer's path after the well-known suffix; lib/auth/authorization-server.ts names the one issuer. */
const ISSUER_PATH = 'api/v1/auth/oauth';

/** RFC 8414 authorization server metadata at the well-known path formed from the issuer (§3). */
export const authorizationServerMetadata = defineHandler({
  summary: 'Discover the authorization server (RFC 8414 metadata)',
  description:
    'RFC 8414 \u00a73: the same metadata as the OpenID discovery document, at `/.well-known/oauth-authorization-server/api/v1/auth/oauth` (the well-known suffix inserted between the host and the issuer\u2019s path), so OAuth 2.0 clients that discover by RFC 8414 find it; `issuer` equals the issuer the path was formed from. Any other path under the suffix names no issuer of this service: 404.',
  responses: { 200: Metadata },
  errors: ['not_found'],
  params: z.object({ issuerPath: z.string() }),
  query: z.strictObject({}),
  async handler({ params, headers }) {
    if (params.issuerPath !== ISSUER_PATH) throw notFound('authorization server');
    return protocol(providerMetadata(headers), { 'Cache-Control': 'public, max-age=300' });
  },
});

/** The authorization server's JWK Set: its discovery `jwks_uri`. */
export const jwks = defineHandler({
  summary: 'Get the authorization server\u2019s JWK set',
  description:
    'The public keys the service signs access tokens with (RFC 7517; the discovery document\u2019s `jwks_uri`): no credential needed, `public` caching with an ETag (a matching `If-None-Match` gets 304). It never holds an account\u2019s jwt-signing keys (those users generate, import or export: GET /api/v1/.well-known/jwks.json), so a token a user signs never verifies against it.',
  responses: { 200: AccountJwks, 304: null },
  media: { 200: ['application/jwk-set+json'] },
  query: z.strictObject({}),
  async handler({ headers }) {
    return jwkSetReply(await serviceKeySet(), headers, 'public');
  },
});

/** RFC 6749 §3.1: parameters the server does not know (`prompt`, `response_mode`, `login_hint`, `resource`, …) are ignored, not refused. */
const AuthorizeQuery = z.object({
  response_type: Param,
  client_id: Param,
  redirect_uri: Param,
  scope: Param,
  state: Param,
  code_challenge: Param,
  code_challenge_method: Param,
  nonce: Param,
  ticket: Param,
  decision: z.enum(['allow', 'deny']).optional(),
});

/** RFC 6749 §4.1.1: a redirect to the client (code or error), the sign-in page, or the consent page. */
export const authorize = defineHandler({
  summary: 'Authorize a client (authorization code with PKCE)',
  description:
    'The browser step of the authorization code flow: response_type=code, the client_id, a registered redirect_uri (exact match), PKCE (code_challenge_method=S256), optional scope and state. Without a sign-in session (the HttpOnly `sc_session` cookie the sign-in routes set, path /api/v1/auth) it answers the sign-in page, which comes back here once signed in; without consent to the scopes, the consent page. It ends with a 302 to the redirect URI carrying `code`, `state` and `iss`, or an RFC 6749 §4.1.2.1 error. An unknown client or a redirect URI not registered is a 400 shown, never redirected.',
  responses: { 200: null, 302: null },
  media: { 200: ['text/html'] },
  query: AuthorizeQuery,
  async handler(input): Promise<Reply> {
    const out = await authorizeRequest(input.query, input.headers, requestFacts(input));
    if (out.kind === 'redirect') return { status: 302, data: null, raw: '', headers: { Location: out.location } };
    const page = out.kind === 'sign_in' ? signInPage({ account: out.account }) : consentPage(out);
    return { status: 200, data: null, raw: page.html, headers: page.headers };
  },
});

const TokenBody = z.looseObject({
  grant_type: z.string().min(1).max(256),
  client_id: Param,
  client_secret: Param,
  client_assertion_type: Param,
  client_assertion: z.string().max(8192).optional(),
  code: Param,
  redirect_uri: Param,
  code_verifier: z
    .string()
    .regex(/^[A-Za-z0-9._~-]{43,128}$/, 'a PKCE code_verifier: 43-128 characters of [A-Za-z0-9._~-] (RFC 7636 §4.1)')
    .optional(),
  refresh_token: Param,
  scope: Param,
});

const TokenAnswer = z.strictObject({
  token_type: z.literal('Bearer'),
  access_token: z.string(),
  expires_in: z.number().int(),
  refresh_token: z.string().optional(),
  scope: z.string(),
  id_token: z.string().optional(),
});

/** RFC 6749 §3.2: authorization_code, refresh_token (rotated) and client_credentials; RFC 6749 §5 answers and errors. */
export const token = defineHandler({
  summary: 'Issue tokens to a registered client',
  description:
    'Form-encoded (or JSON) RFC 6749 token requests: `authorization_code` (with `openid` among the scopes, also an OpenID Connect ID token: ES256, signed by a key of the discovery `jwks_uri`, `aud` the client_id, with `nonce`, `auth_time` and `at_hash`) (with the PKCE code_verifier and the same redirect_uri; a code presented again is refused and revokes the grant it gave, RFC 6749 §4.1.2), `refresh_token` (the refresh token is spent and a new one returned; a used one revokes the whole grant, except a retry by the same client within 30 s while the new one is unused, which gets the same new one) and `client_credentials`. Clients authenticate with their registered method: client_secret_basic, client_secret_post, private_key_jwt, or none for a public client (it names itself with client_id; PKCE binds its code) (RFC 7523, signed by a key of the client\u2019s JWK set, aud = the issuer or this endpoint, jti once). Answers and errors are RFC 6749 §5 JSON, not the envelope. Access tokens are RFC 9068 JWTs (`typ` at+jwt; `iss` the discovery issuer, `aud`, `client_id`, `sub`, `jti`), carry exactly the granted scopes and are refused once their grant is revoked.',
  responses: { 200: TokenAnswer },
  errors: ['invalid_client', 'invalid_grant', 'invalid_scope', 'unauthorized_client', 'unsupported_grant_type', 'invalid_request'],
  body: TokenBody,
  async handler(input) {
    return protocol(await tokenRequest(input.body, input.headers, requestFacts(input)));
  },
});

const Claims = z.looseObject({ sub: z.string(), email: z.string().optional(), email_verified: z.boolean().optional() });
const USERINFO =
  'OpenID Connect Core \u00a75.3: the claims about the person an access token with `openid` was issued for, as top-level JSON: `sub` (the ID token\u2019s), and with `email` their e-mail and `email_verified`. The access token comes as `Authorization: Bearer` (or, on POST, the form\u2019s `access_token`); an unusable one is 401 `invalid_token` with `WWW-Authenticate: Bearer error="invalid_token"`, one without `openid` 403 `insufficient_scope`.';

/** OIDC Core §5.3 userinfo, GET. */
export const userinfo = defineHandler({
  summary: 'Get the signed-in person\u2019s claims (OpenID Connect userinfo)',
  description: USERINFO,
  responses: { 200: Claims },
  errors: ['invalid_token', 'insufficient_scope'],
  query: z.object({}),
  async handler({ headers }) {
    return protocol(await userinfoRequest(bearerOf(headers)), { 'Cache-Control': 'no-store' });
  },
});

/** OIDC Core §5.3.1 userinfo, POST (the token in the header or as the form's access_token). */
export const userinfoPost = defineHandler({
  summary: 'Get the signed-in person\u2019s claims (OpenID Connect userinfo, POST)',
  description: USERINFO,
  responses: { 200: Claims },
  errors: ['invalid_token', 'insufficient_scope', 'invalid_request'],
  body: z.looseObject({ access_token: z.string().max(4096).optional() }).optional(),
  async handler({ headers, body }) {
    return protocol(await userinfoRequest(bearerOf(headers, body?.access_token)), { 'Cache-Control': 'no-store' });
  },
});

const Introspection = z.looseObject({
  active: z.boolean(),
  token_type: z.string().optional(),
  scope: z.string().optional(),
  client_id: z.string().optional(),
  sub: z.string().optional(),
  exp: z.number().int().optional(),
  iat: z.number().int().optional(),
  iss: z.string().optional(),
  jti: z.string().optional(),
});

/** RFC 7662 token introspection for the account's confidential clients. */
export const introspect = defineHandler({
  summary: 'Introspect a token (RFC 7662)',
  description:
    'Form-encoded (or JSON) RFC 7662 request: `token` (an access token or a refresh token; `token_type_hint` is ignored), with the client\u2019s authentication as at the token endpoint (a public client cannot introspect: 401 `invalid_client`). An active token of the client\u2019s account answers `active: true` with its `scope`, `client_id`, `sub`, `exp`, `iat`, `iss`, `aud`, `jti` and `token_type`; anything else (unknown, expired, revoked, another account\u2019s, a used refresh token) only `{"active": false}`.',
  responses: { 200: Introspection },
  errors: ['invalid_client', 'invalid_request'],
  body: z.looseObject({
    token: z.string().min(1).max(4096),
    token_type_hint: z.string().max(256).optional(),
    client_id: Param,
    client_secret: Param,
    client_assertion_type: Param,
    client_assertion: z.string().max(8192).optional(),
  }),
  async handler(input) {
    return protocol(await introspectRequest(input.body, input.headers, requestFacts(input)), { 'Cache-Control': 'no-store' });
  },
});

/** OpenID Connect RP-Initiated Logout 1.0: the discovery `end_session_endpoint`. */
export const endSession = defineHandler({
  summary: 'Sign out of the browser session (OpenID Connect RP-initiated logout)',
  description:
    'The `end_session_endpoint`: ends the browser\u2019s sign-in session (the `sc_session` cookie\u2019s; the cookie is cleared) and, with `post_logout_redirect_uri` equal to a redirect URI registered for the client named by `client_id` or `id_token_hint`, a 302 there with `state`; otherwise a page saying the person is signed out. Other parameters (`ui_locales`, `logout_hint`) are ignored.',
  responses: { 200: null, 302: null },
  media: { 200: ['text/html'] },
  query: z.object({ id_token_hint: z.string().max(8192).optional(), client_id: Param, post_logout_redirect_uri: Param, state: Param }),
  async handler(input): Promise<Reply> {
    const out = await endSessionRequest(input.query, input.headers, requestFacts(input));
    const clear = { 'Set-Cookie': clearedSessionCookie(input.headers), 'Cache-Control': 'no-store' };
    if (out.kind === 'redirect') return { status: 302, data: null, raw: '', headers: { Location: out.location, ...clear } };
    const page = signedOutPage();
    return { status: 200, data: null, raw: page.html, headers: { ...page.headers, ...clear } };
  },
});

import * as z from 'zod/v4';
import { Email } from '../../lib/account/schemas.js';
import { created, defineHandler, ok } from '../../lib/http/index.js';
import { Uuid } from '../../lib/schemas.js';
import { beginVerify, finishVerify, RESET_TOKEN_RE, registerVerifier } from '../../lib/users/passwords.js';
import { PasswordRegistered, PasswordVerify } from '../../lib/users/schemas.js';
import { requestFacts } from '../../lib/users/sessions.js';
import { sessionCookie } from '../../lib/auth/authorization-server.js';
import { GROUP_HEX_RE, HASH_HEX_RE, SRP_VERSIONS } from '../../lib/users/srp.js';

const hex = (re: RegExp, what: string) => z.string().regex(re, what);
const SrpVersion = z
  .union(SRP_VERSIONS.map((v) => z.literal(v)))
  .optional()
  .describe('2: RFC 5054 (k = H(N | PAD(g))), what new clients send; absent or 1: k = H(N | g) with g as one byte');

const RegisterBody = z.strictObject({
  tenant_id: Uuid,
  email: Email,
  salt: hex(HASH_HEX_RE, '32 bytes as 64 hex digits'),
  verifier: hex(GROUP_HEX_RE, 'v = g^x mod N as 512 hex digits (256 bytes, left-padded)'),
  srp_version: SrpVersion,
  reset_token: z.string().regex(RESET_TOKEN_RE, 'the reset token (scpr_...) from POST /api/v1/admin/users/reset-password').optional(),
});

const VerifyBody = z.union([
  z.strictObject({ tenant_id: Uuid, email: Email, client_public: hex(GROUP_HEX_RE, 'A = g^a mod N as 512 hex digits'), srp_version: SrpVersion }),
  z.strictObject({ challenge_id: Uuid, client_proof: hex(HASH_HEX_RE, 'M1 as 64 hex digits') }),
]);

/** Sets the user's SRP salt and verifier: with a reset token, or in the user's own session (Authorization: Bearer). */
export const register = defineHandler({
  summary: 'Set a password (SRP-6a verifier)',
  description: 'The user’s SRP salt and verifier, never the password: with a reset token from an operator, or in the user’s own session.',
  responses: { 201: PasswordRegistered },
  errors: ['unauthorized', 'forbidden', 'not_found', 'tenant_suspended', 'bad_request'],
  body: RegisterBody,
  async handler(input) {
    return created({ registered: true, ...(await registerVerifier(input.body, input.headers, requestFacts(input))) });
  },
});

/** Step 1 `{tenant_id, email, client_public}` → `{challenge_id, salt, server_public}`; step 2 `{challenge_id, client_proof}` → `{server_proof}` and a session. */
export const verify = defineHandler({
  summary: 'Sign in with a password (SRP-6a)',
  description:
    'Step 1 `{tenant_id, email, client_public}` answers `{challenge_id, salt, server_public}`; step 2 `{challenge_id, client_proof}` answers the server proof and a session. The password never leaves the client.',
  responses: { 200: PasswordVerify },
  errors: ['sign_in_failed', 'tenant_suspended', 'bad_request'],
  body: VerifyBody,
  async handler(input) {
    const { body } = input;
    if ('client_public' in body) return ok(await beginVerify(body));
    const session = await finishVerify(body, requestFacts(input));
    return ok(session, { 'Set-Cookie': sessionCookie(session.access_token, session.expires_in, input.headers) });
  },
});

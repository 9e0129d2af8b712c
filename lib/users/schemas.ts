import * as z from 'zod/v4';
import { Timestamp } from '../schemas.js';

/* Responses of the sign-in routes (functions/auth): sessions, passkeys, passwords. */

/** A new session's tokens (lib/users/sessions.ts `SessionTokens`), as an OAuth 2.0 token response. */
export const SessionTokensSchema = z.object({
  token_type: z.literal('Bearer'),
  access_token: z.string().describe('A JWT for Authorization: Bearer.'),
  expires_in: z.int().min(1).describe('Seconds until the access token expires.'),
  refresh_token: z.string().regex(/^scr_/).describe('Single use: POST /api/v1/auth/refresh returns a new one; a reused token revokes the session.'),
  session_id: z.string(),
  scope: z.string().describe('The session’s scopes, space-separated.'),
});

/** A sign-in: the session's tokens and who signed in. */
export const SignedIn = SessionTokensSchema.extend({ email: z.string() });

export const SignedOut = z.object({ signed_out: z.literal(true), session_id: z.string() });

/** W3C WebAuthn Level 3 `PublicKeyCredentialCreationOptionsJSON` / `...RequestOptionsJSON`: passed to the browser as is. */
const WebAuthnOptions = z.looseObject({ challenge: z.string().describe('base64url') });

export const PasskeyChallenge = z.object({
  challenge_id: z.uuid().describe('Send back with the credential to finish.'),
  options: WebAuthnOptions,
});

const PasskeySchema = z.object({
  id: z.string().describe('The credential id (base64url).'),
  user: z.string(),
  name: z.string(),
  counter: z.int().min(0),
  transports: z.array(z.string()),
  device_type: z.string(),
  backed_up: z.boolean(),
  created_at: Timestamp,
  last_used_at: Timestamp.nullable(),
});
export const PasskeyRegistered = z.object({ credential: PasskeySchema });
export const PasskeyList = z.object({ credentials: z.array(PasskeySchema), total: z.int().min(0) });
export const PasskeyDeleted = z.object({ deleted: z.literal(true), credential: z.object({ id: z.string(), name: z.string() }) });

const SrpVersionSchema = z
  .union([z.literal(1), z.literal(2)])
  .describe('2: RFC 5054 (k = H(N | PAD(g))); 1: k = H(N | g) with g as one byte (earlier clients)');

export const PasswordRegistered = z.object({ registered: z.literal(true), email: z.string(), srp_version: SrpVersionSchema });

/** SRP-6a step 1 answers the challenge, step 2 the server proof with a session. */
export const PasswordVerify = z.union([
  z.object({
    challenge_id: z.uuid(),
    salt: z.string().regex(/^[0-9a-fA-F]+$/),
    server_public: z
      .string()
      .regex(/^[0-9a-fA-F]+$/)
      .describe('B = kv + g^b mod N'),
    srp_version: SrpVersionSchema,
    expires_at: Timestamp,
  }),
  SessionTokensSchema.extend({
    server_proof: z
      .string()
      .regex(/^[0-9a-fA-F]+$/)
      .describe('M2: proves the server knows the verifier.'),
  }),
]);

import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import * as z from 'zod/v4';
import { Email } from '../../lib/account/schemas.js';
import { created, defineHandler, ok } from '../../lib/http/index.js';
import { Uuid } from '../../lib/schemas.js';
import {
  beginAuthentication,
  beginRegistration,
  deleteCredential,
  finishAuthentication,
  finishRegistration,
  listCredentials,
  requireOwnSession,
} from '../../lib/users/passkeys.js';
import { PasskeyChallenge, PasskeyDeleted, PasskeyList, PasskeyRegistered, SignedIn } from '../../lib/users/schemas.js';
import { requestFacts } from '../../lib/users/sessions.js';
import { sessionCookie } from '../../lib/auth/authorization-server.js';

/** A credential id: base64url, as WebAuthn's JSON serialization carries it. */
const CredentialId = z.string().regex(/^[A-Za-z0-9_-]{16,1366}$/, 'a passkey id (base64url)');

/** PublicKeyCredential.toJSON(): checked for shape here, cryptographically by @simplewebauthn/server. */
const CredentialJson = z.looseObject({
  id: CredentialId,
  rawId: CredentialId,
  type: z.literal('public-key'),
  response: z.looseObject({ clientDataJSON: z.string().min(1) }),
  clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
});

const Empty = z.strictObject({}).optional();
const RegistrationFinish = z.strictObject({ challenge_id: Uuid, response: CredentialJson, name: z.string().trim().min(1).max(128).optional() });
const AuthenticationBegin = z.strictObject({ tenant_id: Uuid, email: Email.optional() });
const AuthenticationFinish = z.strictObject({ challenge_id: Uuid, response: CredentialJson });
const CredentialParams = z.strictObject({ id: CredentialId });

export const registrationBegin = defineHandler({
  summary: 'Begin registering a passkey',
  description: 'In the user’s own sign-in session: WebAuthn creation options for navigator.credentials.create().',
  responses: { 200: PasskeyChallenge },
  errors: ['forbidden'],
  authorize: requireOwnSession,
  body: Empty,
  async handler({ ctx }) {
    return ok(await beginRegistration(ctx));
  },
});

export const registrationFinish = defineHandler({
  summary: 'Finish registering a passkey',
  responses: { 201: PasskeyRegistered },
  errors: ['forbidden', 'not_found', 'sign_in_failed', 'already_exists'],
  authorize: requireOwnSession,
  body: RegistrationFinish,
  async handler({ ctx, body }) {
    return created(await finishRegistration(ctx, body));
  },
});

export const authenticationBegin = defineHandler({
  summary: 'Begin signing in with a passkey',
  description: 'WebAuthn request options for navigator.credentials.get().',
  responses: { 200: PasskeyChallenge },
  body: AuthenticationBegin,
  async handler({ body }) {
    return ok(await beginAuthentication(body));
  },
});

export const authenticationFinish = defineHandler({
  summary: 'Finish signing in with a passkey',
  description: 'Verifies the assertion (signature and counter) and opens a session.',
  responses: { 200: SignedIn },
  errors: ['sign_in_failed', 'tenant_suspended'],
  body: AuthenticationFinish,
  async handler(input) {
    const { body } = input;
    const proof = { challenge_id: body.challenge_id, response: body.response as unknown as AuthenticationResponseJSON };
    const session = await finishAuthentication(proof, requestFacts(input));
    return ok(session, { 'Set-Cookie': sessionCookie(session.access_token, session.expires_in, input.headers) });
  },
});

export const list = defineHandler({
  summary: 'List passkeys',
  description: 'The caller’s own in a session; every user’s with admin:*.',
  responses: { 200: PasskeyList },
  errors: ['insufficient_scope'],
  async handler({ ctx }) {
    const credentials = await listCredentials(ctx);
    return ok({ credentials, total: credentials.length });
  },
});

export const remove = defineHandler({
  summary: 'Delete a passkey',
  responses: { 200: PasskeyDeleted },
  errors: ['not_found', 'insufficient_scope'],
  params: CredentialParams,
  async handler({ ctx, params }) {
    return ok(await deleteCredential(ctx, params.id));
  },
});

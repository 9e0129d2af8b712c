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
} from '../../lib/users/passkeys.js';
import { requestFacts } from '../../lib/users/sessions.js';
import { sessionCookie } from '../../lib/oauth/base.js';

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
  body: Empty,
  async handler({ ctx }) {
    return ok(await beginRegistration(ctx));
  },
});

export const registrationFinish = defineHandler({
  body: RegistrationFinish,
  async handler({ ctx, body }) {
    return created(await finishRegistration(ctx, body));
  },
});

export const authenticationBegin = defineHandler({
  body: AuthenticationBegin,
  async handler({ body }) {
    return ok(await beginAuthentication(body));
  },
});

export const authenticationFinish = defineHandler({
  body: AuthenticationFinish,
  async handler(input) {
    const { body } = input;
    const proof = { challenge_id: body.challenge_id, response: body.response as unknown as AuthenticationResponseJSON };
    const session = await finishAuthentication(proof, requestFacts(input));
    return ok(session, { 'Set-Cookie': sessionCookie(session.access_token, session.expires_in, input.headers) });
  },
});

export const list = defineHandler({
  async handler({ ctx }) {
    const credentials = await listCredentials(ctx);
    return ok({ credentials, total: credentials.length });
  },
});

export const remove = defineHandler({
  params: CredentialParams,
  async handler({ ctx, params }) {
    return ok(await deleteCredential(ctx, params.id));
  },
});

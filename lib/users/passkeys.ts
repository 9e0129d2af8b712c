import { createHash } from 'node:crypto';
import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import { commit } from '../audit/audit.js';
import type { CallContext, Principal } from '../auth/principal.js';
import { ADMIN_SCOPE } from '../auth/scopes.js';
import { config } from '../config.js';
import { conflict, forbidden, notFound, unauthorized } from '../core/errors.js';
import { newId, nowIso } from '../ids.js';
import { tableName } from '../store/client.js';
import { keys } from '../store/keys.js';
import { getTenant } from '../store/tenants.js';
import { TxConditionFailed } from '../store/tx.js';
import { openSession, type RequestFacts, type SessionTokens } from './sessions.js';
import { getPasskey, listPasskeys, type Passkey, peek, putChallenge as storeChallenge, spend } from './store.js';
import { identifyTenant } from '../tenancy/scope.js';
import { getUser } from './users.js';

/**
 * Passkeys (WebAuthn, @simplewebauthn/server). A user in a session registers a passkey;
 * anyone signs in with one. Challenges are single-use items (spent by a conditional delete
 * before verification) that live five minutes; user verification is required at
 * registration and at every sign-in; the signature counter must grow (a cloned
 * authenticator is refused) and is updated conditionally on the value read. The relying
 * party is the service's public origin (PUBLIC_BASE_URL); its host is the RP ID, a loopback
 * address standing for `localhost` (WebAuthn refuses IP addresses as RP IDs: the local
 * runtime's pages are opened at http://localhost:<port>).
 */
const CHALLENGE_SECONDS = 300;
const RP_NAME = 'Secrets API';

function relyingParty(): { rpID: string; origin: string } {
  const base = new URL(config().PUBLIC_BASE_URL ?? 'http://localhost');
  const host = /^(127\.\d+\.\d+\.\d+|\[::1\])$/.test(base.hostname) ? 'localhost' : base.hostname;
  return { rpID: host, origin: `${base.protocol}//${host}${base.port ? `:${base.port}` : ''}` };
}

const view = (p: Passkey) => ({
  id: p.id,
  user: p.user,
  name: p.name,
  counter: p.counter,
  transports: p.transports,
  device_type: p.device_type,
  backed_up: p.backed_up,
  created_at: p.created_at,
  last_used_at: p.last_used_at,
});

async function putChallenge(item: Record<string, unknown>): Promise<string> {
  const id = newId();
  await storeChallenge(id, item, CHALLENGE_SECONDS);
  return id;
}

/** Spends a challenge (single use); undefined when unknown, used, expired or of another purpose. */
async function spendChallenge(id: string, purpose: 'registration' | 'authentication'): Promise<Record<string, unknown> | undefined> {
  const c = await spend(keys.webauthnChallenge(id));
  if (!c || c.purpose !== purpose || Date.parse(String(c.expires_at)) <= Date.now()) return undefined;
  return c;
}

/**
 * The user of a session: passkeys are registered by the person, in a session of their own.
 * Decided on the credential alone, so the registration routes ask it before they validate
 * the request (defineHandler `authorize`).
 */
export function requireOwnSession(p: Principal): string {
  if (p.kind !== 'user_token' || !p.user || p.client !== undefined)
    throw forbidden('a passkey is registered by its user in a sign-in session, not with an API key or an OAuth client\u2019s token');
  return p.user;
}
const sessionUser = (ctx: CallContext): string => requireOwnSession(ctx.principal);

export async function beginRegistration(ctx: CallContext) {
  const email = sessionUser(ctx);
  const tenantId = ctx.principal.tenantId;
  const mine = (await listPasskeys(tenantId)).filter((p) => p.user === email);
  const { rpID } = relyingParty();
  const options = await generateRegistrationOptions({
    rpName: RP_NAME,
    rpID,
    userName: email,
    userID: createHash('sha256').update(`${tenantId}\0${email}`).digest().subarray(0, 32),
    attestationType: 'none',
    excludeCredentials: mine.map((p) => ({ id: p.id, transports: p.transports })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    timeout: CHALLENGE_SECONDS * 1000,
  });
  const id = await putChallenge({ purpose: 'registration', tenant_id: tenantId, user: email, challenge: options.challenge });
  return { challenge_id: id, options };
}

const refused = (why: string) => unauthorized(`passkey refused: ${why}`, 'sign_in_failed');

export async function finishRegistration(ctx: CallContext, input: { challenge_id: string; response: unknown; name?: string }) {
  const email = sessionUser(ctx);
  const tenantId = ctx.principal.tenantId;
  const c = await spendChallenge(input.challenge_id, 'registration');
  if (!c || c.tenant_id !== tenantId || c.user !== email) throw notFound('registration challenge');
  const { rpID, origin } = relyingParty();
  let verified: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    verified = await verifyRegistrationResponse({
      response: input.response as RegistrationResponseJSON,
      expectedChallenge: c.challenge as string,
      expectedOrigin: origin,
      expectedRPID: rpID,
      requireUserVerification: true,
    });
  } catch (error) {
    throw refused((error as Error).message);
  }
  if (!verified.verified) throw refused('the attestation did not verify');
  const info = verified.registrationInfo;
  const passkey: Passkey = {
    id: info.credential.id,
    user: email,
    name: input.name ?? `passkey ${nowIso().slice(0, 10)}`,
    public_key: info.credential.publicKey,
    counter: info.credential.counter,
    transports: info.credential.transports ?? [],
    device_type: info.credentialDeviceType,
    backed_up: info.credentialBackedUp,
    created_at: nowIso(),
    last_used_at: null,
  };
  try {
    await commit(
      ctx,
      tenantId,
      [
        {
          Put: {
            TableName: tableName(),
            Item: { ...keys.passkey(tenantId, passkey.id), ...passkey },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
      ],
      { action: 'passkey.register', resource: { type: 'passkey', id: passkey.id, name: passkey.name }, detail: { user: email } },
    );
  } catch (error) {
    if (error instanceof TxConditionFailed && !error.conflict) throw conflict('this passkey is already registered', 'already_exists');
    throw error;
  }
  return { credential: view(passkey) };
}

/** Options for a sign-in: discoverable passkeys (no user named), or the named user's own. */
export async function beginAuthentication(input: { tenant_id: string; email?: string }) {
  // the request names the account: everything runs in its tenant session (its passkeys, the
  // challenge naming it, with its owner mark); nothing here is more than anyone may ask of any account
  identifyTenant(input.tenant_id);
  const { rpID } = relyingParty();
  const allow = input.email ? (await listPasskeys(input.tenant_id)).filter((p) => p.user === input.email) : [];
  const options = await generateAuthenticationOptions({
    rpID,
    userVerification: 'required',
    allowCredentials: allow.map((p) => ({ id: p.id, transports: p.transports as never })),
    timeout: CHALLENGE_SECONDS * 1000,
  });
  const id = await putChallenge({
    purpose: 'authentication',
    tenant_id: input.tenant_id,
    ...(input.email ? { user: input.email } : {}),
    challenge: options.challenge,
  });
  return { challenge_id: id, options };
}

export async function finishAuthentication(
  input: { challenge_id: string; response: AuthenticationResponseJSON },
  request: RequestFacts,
): Promise<SessionTokens & { email: string }> {
  // the challenge names the account the sign-in is for (written in that account's session by
  // the begin step, with its owner mark: lib/tenancy/lookups.ts), read on the function's own
  // role; from here on every call uses that account's tenant session (a tenant route,
  // lib/routes.ts SELF_IDENTIFYING_TENANT_ROUTES): the spend, the passkey, the session opened.
  // Whoever names an account at the begin step gets only a challenge the account's passkey must sign
  const seen = await peek(keys.webauthnChallenge(input.challenge_id));
  if (!seen || typeof seen.tenant_id !== 'string' || !seen.tenant_id) throw refused('unknown, used or expired challenge');
  identifyTenant(seen.tenant_id);
  const c = await spendChallenge(input.challenge_id, 'authentication');
  if (!c || c.tenant_id !== seen.tenant_id) throw refused('unknown, used or expired challenge');
  const tenantId = c.tenant_id as string;
  const passkey = await getPasskey(tenantId, input.response.id);
  if (!passkey || (c.user !== undefined && c.user !== passkey.user)) throw refused('unknown passkey');
  const { rpID, origin } = relyingParty();
  let verified: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
  try {
    verified = await verifyAuthenticationResponse({
      response: input.response,
      expectedChallenge: c.challenge as string,
      expectedOrigin: origin,
      expectedRPID: rpID,
      credential: {
        id: passkey.id,
        publicKey: new Uint8Array(passkey.public_key),
        counter: passkey.counter,
        transports: passkey.transports as never,
      },
      requireUserVerification: true,
    });
  } catch (error) {
    throw refused((error as Error).message);
  }
  if (!verified.verified) throw refused('the assertion did not verify');
  const [tenant, user] = await Promise.all([getTenant(tenantId), getUser(tenantId, passkey.user)]);
  if (!tenant || !user) throw refused('unknown passkey');
  // the counter read must still be the stored one (two concurrent uses of one assertion: one wins)
  const counterUpdate = {
    Update: {
      TableName: tableName(),
      Key: keys.passkey(tenantId, passkey.id),
      UpdateExpression: 'SET #c = :new, last_used_at = :at',
      ConditionExpression: '#c = :old',
      ExpressionAttributeNames: { '#c': 'counter' },
      ExpressionAttributeValues: { ':new': verified.authenticationInfo.newCounter, ':old': passkey.counter, ':at': nowIso() },
    },
  };
  try {
    return { ...(await openSession(tenant, user, 'passkey', request, [counterUpdate])), email: user.email };
  } catch (error) {
    if (error instanceof TxConditionFailed && error.index === 0) throw refused('the signature counter changed meanwhile');
    throw error;
  }
}

/** A session sees its own passkeys; an admin credential (admin:*) every passkey of the account. */
function scopeOf(ctx: CallContext): { all: boolean; user: string | null } {
  const p = ctx.principal;
  if (p.kind === 'user_token' && p.user && !p.scopes.includes(ADMIN_SCOPE)) return { all: false, user: p.user };
  if (p.scopes.includes(ADMIN_SCOPE)) return { all: true, user: p.user };
  throw forbidden('passkeys are listed by their user in a session, or with admin:*', 'insufficient_scope');
}

export async function listCredentials(ctx: CallContext) {
  const s = scopeOf(ctx);
  const all = await listPasskeys(ctx.principal.tenantId);
  return all.filter((p) => s.all || p.user === s.user).map(view);
}

export async function deleteCredential(ctx: CallContext, id: string) {
  const s = scopeOf(ctx);
  const tenantId = ctx.principal.tenantId;
  const passkey = await getPasskey(tenantId, id);
  if (!passkey || (!s.all && passkey.user !== s.user)) throw notFound('passkey');
  try {
    await commit(
      ctx,
      tenantId,
      [{ Delete: { TableName: tableName(), Key: keys.passkey(tenantId, id), ConditionExpression: 'attribute_exists(pk)' } }],
      { action: 'passkey.delete', resource: { type: 'passkey', id, name: passkey.name }, detail: { user: passkey.user } },
    );
  } catch (error) {
    if (error instanceof TxConditionFailed && !error.conflict) throw notFound('passkey');
    throw error;
  }
  return { deleted: true, credential: { id, name: passkey.name } };
}

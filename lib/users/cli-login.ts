import { commit } from '../audit/audit.js';
import {
  checkPoll,
  type DeviceAuthorizationResponse,
  formatUserCode,
  normaliseUserCode,
  oauthError,
  POLL_INTERVAL_SECONDS,
  recordPollAt,
  sha256,
  startDeviceAuthorization,
  statusUpdate,
  userCodePointerDelete,
  userCodePointerPut,
} from '../auth/device-flow.js';
import type { CallContext } from '../auth/principal.js';
import { forbidden, notFound } from '../core/errors.js';
import { newId, nowIso } from '../ids.js';
import { tableName } from '../store/client.js';
import { keys } from '../store/keys.js';
import { getTenant } from '../store/tenants.js';
import { TxConditionFailed } from '../store/tx.js';
import { openSession, type RequestFacts, type SessionTokens } from './sessions.js';
import { type CliLogin, getLogin, readCliUserCode } from './store.js';
import { getUser } from './users.js';
import { identifyTenant } from '../tenancy/scope.js';

/**
 * CLI login: the OAuth 2.0 Device Authorization Grant (RFC 8628) ending in a sign-in
 * session of the person who approved it (lib/users/sessions.ts: an ES256 access token with
 * `sid`, a rotating `scr_…` refresh token). The codes, polling rules and errors are the
 * device flow's (lib/auth/device-flow.ts), shared with agent enrolment.
 *
 * 1. `GET /api/v1/auth/cli/login` (no credentials; `client_id`, `name` optional): the
 *    device authorization response (RFC 8628 §3.2). `verification_uri` is the sign-in page
 *    (`/api/v1/auth/oidc/login`), `verification_uri_complete` carries the user code.
 * 2. The person signs in on that page, compares the code with the one the terminal shows,
 *    and approves (or denies): the page calls
 *    `GET /api/v1/auth/cli/login?user_code=…&decision=approve|deny` with
 *    `Authorization: Bearer <the page's session access token>`; without `decision` the same
 *    call only reviews the pending request. Only a sign-in session may decide (an API key
 *    has no person to sign in as). CSRF: the credential travels in the Authorization header,
 *    which a browser never attaches by itself (the API sets no cookie and CORS admits no
 *    foreign origin unless configured), so no other page, link, image or form can make a
 *    signed-in person approve; the user code is single-use and expires in 10 minutes.
 * 3. The CLI polls `POST /api/v1/auth/cli/token` (grant_type device_code, device_code,
 *    client_id?): `authorization_pending`, `slow_down`, `access_denied`, `expired_token`,
 *    `invalid_grant`; once approved a new session of the approver is opened (method `cli`)
 *    and its tokens answered, once.
 * 4. `POST /api/v1/auth/cli/revoke` {token} (RFC 7009): ends the session of that refresh or
 *    access token.
 */

type Status = 'pending' | 'approved' | 'denied' | 'issued';

export async function startCliLogin(
  input: { client_id?: string | undefined; name?: string | undefined },
  verificationUri: string,
): Promise<DeviceAuthorizationResponse> {
  return startDeviceAuthorization(
    ({ codeHash, userCodeHash, expiresAt }) => [
      {
        Put: {
          TableName: tableName(),
          Item: {
            ...keys.cliLogin(codeHash),
            id: newId(),
            code_hash: codeHash,
            user_code_hash: userCodeHash,
            client_id: input.client_id ?? null,
            name: input.name ?? null,
            status: 'pending' satisfies Status,
            created_at: nowIso(),
            expires_at: expiresAt,
            interval: POLL_INTERVAL_SECONDS,
            last_poll_at: 0,
            // no tenant_id, user or decided_at yet (they read as null): a pending login names no
            // account, and the starting route's role may not name one (lib/routes.ts OWN_PARTITIONS)
            // kept a day past expiry so that late polls still get expired_token, then removed by TTL
            ttl: expiresAt + 86_400,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      userCodePointerPut(keys.cliUserCode(userCodeHash), codeHash, expiresAt),
    ],
    verificationUri,
  );
}

const noPending = () => notFound('pending CLI login for this user code (it is single-use and lives 10 minutes: run the login again)');

/** The pending login a user code names, or 404 (unknown, decided, expired: the same answer). */
async function pendingByUserCode(userCode: string): Promise<CliLogin> {
  const code = normaliseUserCode(userCode);
  const now = Math.floor(Date.now() / 1000);
  if (!code) throw noPending();
  const pointer = await readCliUserCode(sha256(code));
  if (!pointer || Number(pointer.ttl) <= now) throw noPending();
  const rec = await getLogin(pointer.code_hash as string);
  if (!rec || rec.user_code_hash !== sha256(code) || rec.status !== 'pending' || now >= rec.expires_at) throw noPending();
  return rec;
}

const view = (rec: CliLogin, userCode: string, status: Status) => ({
  user_code: formatUserCode(normaliseUserCode(userCode)!),
  status,
  client_id: rec.client_id,
  name: rec.name,
  created_at: rec.created_at,
  expires_at: new Date(rec.expires_at * 1000).toISOString(),
});
type CliLoginView = ReturnType<typeof view>;

/** Only a person's sign-in session may review or decide: the CLI session will be that person's. */
function person(ctx: CallContext): { tenantId: string; email: string } {
  const p = ctx.principal;
  if (p.kind !== 'user_token' || !p.user || p.client !== undefined)
    throw forbidden('approve a CLI login from your own sign-in session (the sign-in page), not with an API key or token');
  return { tenantId: p.tenantId, email: p.user };
}

export async function reviewCliLogin(ctx: CallContext, userCode: string): Promise<CliLoginView> {
  person(ctx);
  return view(await pendingByUserCode(userCode), userCode, 'pending');
}

/** Approves (the poll then opens a session of this person in this account) or denies; the user code is spent either way. */
export async function decideCliLogin(ctx: CallContext, userCode: string, decision: 'approve' | 'deny'): Promise<CliLoginView> {
  const { tenantId, email } = person(ctx);
  const rec = await pendingByUserCode(userCode);
  const status = decision === 'approve' ? 'approved' : 'denied';
  const set = decision === 'approve' ? { status, tenant_id: tenantId, user: email, decided_at: nowIso() } : { status, decided_at: nowIso() };
  try {
    await commit(
      ctx,
      tenantId,
      [statusUpdate(keys.cliLogin(rec.code_hash), 'pending', set), userCodePointerDelete(keys.cliUserCode(rec.user_code_hash), rec.code_hash)],
      { action: `cli_login.${decision}`, resource: { type: 'cli_login', id: rec.id, name: rec.name ?? rec.client_id ?? 'cli' } },
    );
  } catch (error) {
    if (error instanceof TxConditionFailed) throw noPending();
    throw error;
  }
  return view(rec, userCode, status);
}

/** One poll of the token endpoint; once approved, the approver's new session (its tokens are answered once). */
export async function pollCliLogin(deviceCode: string, clientId: string | undefined, request: RequestFacts): Promise<SessionTokens> {
  const rec = await checkPoll(await getLogin(sha256(deviceCode)), clientId, (p) =>
    recordPollAt(keys.cliLogin(p.codeHash), p.previous, p.at, p.interval),
  );
  // approved: the login names the approver's account, written in that account's session with
  // its owner mark (CLILOGIN# is a lookup prefix, lib/tenancy/lookups.ts: a login naming an
  // account it was not approved in is dropped at the read, and the starting and polling roles
  // may name no account at all). From here on every call uses that account's tenant session
  // (POST /api/v1/auth/cli/token is a tenant route, lib/routes.ts SELF_IDENTIFYING_TENANT_ROUTES)
  if (!rec.tenant_id || !rec.user) throw oauthError('invalid_grant', 'the approving user no longer exists: run the login again');
  identifyTenant(rec.tenant_id);
  const [tenant, user] = await Promise.all([getTenant(rec.tenant_id), getUser(rec.tenant_id, rec.user)]);
  if (!tenant || !user) throw oauthError('invalid_grant', 'the approving user no longer exists: run the login again');
  try {
    // the login is spent in the transaction that opens the session: two polls cannot both get tokens
    return await openSession(tenant, user, 'cli', request, [statusUpdate(keys.cliLogin(rec.code_hash), 'approved', { status: 'issued' })]);
  } catch (error) {
    if (error instanceof TxConditionFailed && error.index === 0) throw oauthError('invalid_grant', 'this device code has already been used');
    throw error;
  }
}

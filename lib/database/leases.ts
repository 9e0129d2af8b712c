import { entity } from '../store/entity.js';
import * as z from 'zod/v4';
import type { CallContext } from '../auth/principal.js';
import { commit, recordAudit } from '../audit/audit.js';
import { config } from '../config.js';
import { admitted } from '../core/admission.js';
import { badRequest, notFound, serviceUnavailable } from '../core/errors.js';
import { logger } from '../core/logger.js';
import { newId, nowIso } from '../ids.js';
import { tableName } from '../store/client.js';
import { queryCount } from '../store/pagination.js';
import { keys } from '../store/keys.js';
import { actorName } from '../resources/store.js';
import { TxConditionFailed, type TxItem } from '../store/tx.js';
import { DatabaseError } from './errors.js';
import { isConcurrentUpdate, prepareLogin, revokeLogin, type LoginCreation } from './logins.js';
import { databaseRoleProblems, loadConnection, loadRoleAndConnection, type DatabaseRole } from './records.js';
import { openAdminSession, type AdminSession, type ConnectionSettings, type Engine } from './session.js';
import { deleteUnfinishedLease, readLeaseItem } from './store.js';
import { newPassword, newUsername } from './usernames.js';

/**
 * Database credential leases (the spec's "Database leases"; Vault's database secrets engine
 * is the model). A lease is a login created on the customer's server for a limited time.
 *
 * Lease record `T#<tid> / LEASE#<id>`: role, connection, engine, login name, the role's
 * revocation statements as they were at issue time (so a later change of the role cannot
 * strand a login), status, times, and a DynamoDB TTL (`ttl`) some days after it ends
 * (LEASE_RETENTION_DAYS). The password is never stored. While a lease is not revoked it is
 * in the platform listing `LEASES#<n> / <expires_at>#<tid>#<id>` (index `plat`), which the
 * sweeper queries for `< now`. The stream relay, not the tenant session, writes and removes
 * that entry from the lease's own keys and status (lib/events/platform-listings.ts): no
 * tenant session may name a listing's attributes, so none can forge a due lease.
 *
 * Statuses: `active` (committed with its audit entry and event: issueLease below),
 * `revoked` (by DELETE /database/leases/{id}, the sweeper, or its own issuance when a step
 * after the commit failed: `revoked_reason`), `failed` (that issuance could not drop the
 * login at once: kept, out of the API's sight, due in the sweeper's index, which drops it),
 * and `pending`, no longer written: issuance wrote it before touching the server until the
 * lease commit took its place; the sweeper still cleans such records left by a crash
 * (cleanUpAbandoned). The API shows only active and revoked leases; pending and failed
 * ones are 404.
 */
type LeaseStatus = 'pending' | 'active' | 'revoked' | 'failed';

interface LeaseRecord {
  readonly id: string;
  readonly tenant_id: string;
  readonly role_id: string;
  readonly role_name: string;
  readonly connection_id: string;
  readonly engine: Engine;
  readonly username: string;
  readonly status: LeaseStatus;
  readonly revocation_statements: readonly string[];
  readonly created_at: string;
  readonly expires_at: string;
  readonly ttl_seconds: number;
  readonly issued_by: string;
  readonly revoked_at?: string;
  readonly revoked_by?: string;
  /** Set when the lease was withdrawn by its own issuance (a failure after its commit). */
  readonly revoked_reason?: string;
}

/** What the caller of POST /database/roles/{id}/credentials receives (the only time the password is seen). */
interface IssuedLease {
  readonly lease_id: string;
  readonly username: string;
  readonly password: string;
  readonly expires_at: string;
  readonly ttl_seconds: number;
}

interface RevokedLease {
  readonly lease_id: string;
  readonly role_id: string;
  readonly username: string;
  readonly status: 'revoked';
  readonly expires_at: string;
  readonly revoked_at: string;
  /** True when an earlier call (or the sweeper) had already revoked it: nothing was done now. */
  readonly already_revoked: boolean;
}

const LeaseItem = entity(
  'database lease',
  z.object({
    id: z.string(),
    tenant_id: z.string(),
    role_id: z.string(),
    role_name: z.string(),
    connection_id: z.string(),
    engine: z.enum(['postgresql', 'mysql', 'mariadb']),
    username: z.string(),
    status: z.enum(['pending', 'active', 'revoked', 'failed']),
    revocation_statements: z.array(z.string()),
    created_at: z.string(),
    expires_at: z.string(),
    ttl_seconds: z.number(),
    issued_by: z.string(),
    revoked_at: z.string().optional(),
    revoked_by: z.string().optional(),
    revoked_reason: z.string().optional(),
  }),
);
const toLease = (item: Record<string, unknown>): LeaseRecord => LeaseItem.parse(item);

const epoch = (iso: string) => Math.floor(Date.parse(iso) / 1000);
const retention = () => config().LEASE_RETENTION_DAYS * 86_400;

export async function getLease(tenantId: string, id: string): Promise<LeaseRecord | undefined> {
  const item = await readLeaseItem(tenantId, id);
  return item ? toLease(item) : undefined;
}

/** A database failure as the API's 503 (its message is already sanitised); anything else unchanged. */
export function asUnavailable(error: unknown): unknown {
  if (error instanceof DatabaseError) return serviceUnavailable(error.message, error);
  return error;
}

/**
 * Best-effort removal of whatever login exists under this name (in `session`, else in one
 * opened from `settings` or from the lease's connection); true when the server confirmed it.
 */
async function dropQuietly(session: AdminSession | undefined, lease: LeaseRecord, settings?: ConnectionSettings): Promise<boolean> {
  try {
    const s = session ?? (await openAdminSession(settings ?? (await loadConnection(lease.tenant_id, lease.connection_id)).settings));
    try {
      await revokeLogin(s, lease.username, lease.revocation_statements);
      return true;
    } finally {
      if (!session) await s.close();
    }
  } catch (error) {
    logger.warn('lease login cleanup failed', {
      tenant_id: lease.tenant_id,
      lease_id: lease.id,
      code: error instanceof DatabaseError ? error.code : 'unknown',
    });
    return false;
  }
}

/**
 * Issues a lease: a unique login on the role's connection, created by the role's creation
 * statements, valid for `ttlSeconds` (default the role's default_ttl_seconds, at most its
 * max_ttl_seconds). Unknown or foreign role → 404; missing or unusable connection,
 * unreachable server, refused statements → 503 (audited as a failure). Not retried, except
 * PostgreSQL's own "changed at the same time" failures of the creation statements (below).
 * Reused by the agents' `database.issue` grant with the device's CallContext.
 *
 * Three DynamoDB round trips on the API route: the credential, then the account, the
 * limiter, the role and the connection together (the connection the role is expected to
 * name: records.ts loadRoleAndConnection), then one commit of the active lease with its
 * audit entry and `lease.issued` event. No record is written before it, and still no crash
 * can leave a login the service does not know of:
 *
 * - PostgreSQL (transactional DDL): the creation statements run inside a transaction left
 *   open, then the lease is committed, then the transaction. A crash or failure before the
 *   lease commit ends the session and PostgreSQL rolls the login back; a failed COMMIT after
 *   it is compensated (below). A creation statement that fails leaves nothing behind.
 * - MySQL/MariaDB (DDL commits at once): the admin session is opened first (most failures,
 *   an unreachable server or refused admin credentials, happen there, before anything is
 *   recorded), then the lease is committed, then the statements run. A crash after the
 *   commit leaves an active lease whose login may be missing or partial: the sweeper revokes
 *   it at its expiry (revokeLogin reports `login_existed: false` when there was none). The
 *   honest wart: a statement that fails there comes after the `database.lease_issue` entry
 *   and the `lease.issued` event, so the account sees an issue followed by its compensation.
 *
 * Compensation (a failure after the lease commit): whatever was created is dropped, and one
 * transaction marks the lease `revoked` (`revoked_reason`), audits `database.lease_issue`
 * with outcome `failure` and emits `lease.revoked`; if the login could not be dropped, the
 * lease is marked `failed` instead and put due in the sweeper's index, which drops the
 * login at its next run. Either way the caller gets 503 and no password.
 */
export async function issueLease(ctx: CallContext, roleId: string, opts: { ttlSeconds?: number } = {}): Promise<IssuedLease> {
  const tid = ctx.principal.tenantId;
  const { role, connection } = await loadRoleAndConnection(tid, roleId);
  const ttl = opts.ttlSeconds ?? role.defaultTtlSeconds;
  if (ttl > role.maxTtlSeconds) {
    throw badRequest(`ttl_seconds exceeds the role's max_ttl_seconds (${role.maxTtlSeconds})`, [
      { path: 'body.ttl_seconds', message: `at most ${role.maxTtlSeconds}` },
    ]);
  }
  const conn = await connection();
  const engine = conn.settings.engine;
  const username = checkedUsername(role, engine);
  const password = newPassword();
  const now = Date.now();
  const lease: LeaseRecord = {
    id: newId(),
    tenant_id: tid,
    role_id: role.id,
    role_name: role.name,
    connection_id: conn.settings.id,
    engine,
    username,
    status: 'active',
    revocation_statements: role.revocationStatements,
    created_at: new Date(now).toISOString(),
    expires_at: new Date(now + ttl * 1000).toISOString(),
    ttl_seconds: ttl,
    issued_by: actorName(ctx),
  };

  // A speculative run (lib/core/admission.ts) reaches the customer's server only once the
  // request is admitted: account active, scopes, rate limits. (Its table writes wait anyway.)
  await admitted();
  let session: AdminSession;
  try {
    session = await openAdminSession(conn.settings);
  } catch (error) {
    await auditFailure(ctx, role, error);
    throw asUnavailable(error);
  }
  try {
    let login: LoginCreation;
    try {
      login = prepareLogin(session, role.creationStatements, {
        name: username,
        password,
        expiresAt: new Date(lease.expires_at),
        // PostgreSQL holds the creation transaction open across the lease commit: the role's
        // issuances take turns (they would GRANT on the same catalog rows and fail on each other)
        serializeOn: role.id,
      });
    } catch (error) {
      await auditFailure(ctx, role, error);
      throw asUnavailable(error);
    }
    if (session.dialect === 'postgresql') await createThenRecord(ctx, role, lease, login, conn.settings);
    else await recordThenCreate(ctx, role, lease, login, session);
  } finally {
    await session.close();
  }
  return { lease_id: lease.id, username, password, expires_at: lease.expires_at, ttl_seconds: ttl };
}

const CREATE_ATTEMPTS = 4;

/** PostgreSQL: statements in an open transaction → the lease commit → COMMIT. */
async function createThenRecord(ctx: CallContext, role: DatabaseRole, lease: LeaseRecord, login: LoginCreation, settings: ConnectionSettings) {
  for (let attempt = 1; ; attempt++) {
    try {
      await login.run();
      break;
    } catch (error) {
      // another lease's transaction changed the same catalog row (a GRANT on the same table):
      // rolled back, nothing recorded; the same statements again usually pass
      if (isConcurrentUpdate(error) && attempt < CREATE_ATTEMPTS) {
        await sleep(5 + Math.random() * 20 * attempt);
        continue;
      }
      await auditFailure(ctx, role, error);
      throw asUnavailable(error);
    }
  }
  try {
    await recordIssued(ctx, lease);
  } catch (error) {
    await login.rollback();
    await auditFailure(ctx, role, error);
    throw notRecorded(error);
  }
  try {
    await login.commit();
  } catch (error) {
    await compensate(ctx, role, lease, error, undefined, settings);
    throw asUnavailable(error);
  }
}

/** MySQL/MariaDB: the lease commit → the statements (each final as it runs). */
async function recordThenCreate(ctx: CallContext, role: DatabaseRole, lease: LeaseRecord, login: LoginCreation, session: AdminSession) {
  try {
    await recordIssued(ctx, lease);
  } catch (error) {
    await auditFailure(ctx, role, error);
    throw notRecorded(error);
  }
  try {
    await login.run();
  } catch (error) {
    await compensate(ctx, role, lease, error, session);
    throw asUnavailable(error);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function notRecorded(error: unknown): unknown {
  if (error instanceof TxConditionFailed) return serviceUnavailable('the lease could not be recorded; nothing was issued', error);
  return error;
}

/** The one commit of an issued lease: the active lease, its audit entry and its `lease.issued` event. */
async function recordIssued(ctx: CallContext, lease: LeaseRecord): Promise<void> {
  const tid = lease.tenant_id;
  const put: TxItem = {
    Put: {
      TableName: tableName(),
      Item: {
        // no listing keys: the stream relay lists the lease for the sweeper (lib/events/platform-listings.ts)
        ...keys.lease(tid, lease.id),
        ...lease,
        ttl: epoch(lease.expires_at) + retention(),
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
  await commit(ctx, tid, [put], {
    action: 'database.lease_issue',
    resource: { type: 'database_lease', id: lease.id, name: lease.username },
    detail: {
      role_id: lease.role_id,
      connection_id: lease.connection_id,
      engine: lease.engine,
      ttl_seconds: lease.ttl_seconds,
      expires_at: lease.expires_at,
    },
    event: { type: 'lease.issued', data: { id: lease.id, resource_id: lease.connection_id, role_id: lease.role_id, expires_at: lease.expires_at } },
  });
}

/**
 * A failure after the lease was committed: drop whatever login exists, then in one
 * transaction mark the lease revoked (or failed, due for the sweeper, when the login could
 * not be dropped), audit the failure and emit `lease.revoked`. Should that transaction fail
 * too, the lease stays active and the sweeper revokes it at its expiry.
 */
async function compensate(
  ctx: CallContext,
  role: DatabaseRole,
  lease: LeaseRecord,
  error: unknown,
  session: AdminSession | undefined,
  settings?: ConnectionSettings,
): Promise<void> {
  const tid = lease.tenant_id;
  const cleaned = await dropQuietly(session, lease, settings);
  const at = nowIso();
  const failure = failureDetail(error);
  const reason = `issuance failed (${failure.phase}, ${failure.code})`;
  const update: TxItem = {
    Update: {
      TableName: tableName(),
      Key: keys.lease(tid, lease.id),
      ...(cleaned
        ? {
            UpdateExpression: 'SET #s = :revoked, revoked_at = :at, revoked_by = :by, revoked_reason = :why, #ttl = :ttl',
            ExpressionAttributeValues: {
              ':revoked': 'revoked',
              ':active': 'active',
              ':at': at,
              ':by': actorName(ctx),
              ':why': reason,
              ':ttl': epoch(at) + retention(),
            },
          }
        : {
            // due now: the relay lists a failed lease as due at once, and the sweeper's next run
            // drops the login (cleanUpAbandoned)
            UpdateExpression: 'SET #s = :failed, revoked_reason = :why, #ttl = :ttl',
            ExpressionAttributeValues: {
              ':failed': 'failed',
              ':active': 'active',
              ':why': reason,
              ':ttl': epoch(lease.expires_at) + retention(),
            },
          }),
      ConditionExpression: '#s = :active',
      ExpressionAttributeNames: { '#s': 'status', '#ttl': 'ttl' },
    },
  };
  await commit(ctx, tid, [update], {
    action: 'database.lease_issue',
    outcome: 'failure',
    resource: { type: 'database_role', id: role.id, name: role.name },
    detail: { ...failure, cleaned_up: cleaned, lease_id: lease.id },
    event: { type: 'lease.revoked', data: { id: lease.id, resource_id: lease.connection_id, role_id: lease.role_id, expires_at: lease.expires_at } },
  }).catch((err: unknown) =>
    logger.error('could not record a failed lease issuance: the sweeper revokes the lease at its expiry', {
      tenant_id: tid,
      lease_id: lease.id,
      error: err as Error,
    }),
  );
}

function checkedUsername(role: DatabaseRole, engine: Engine): string {
  const problems = databaseRoleProblems(
    {
      creation_statements: role.creationStatements,
      revocation_statements: role.revocationStatements,
      ...(role.usernameTemplate ? { username_template: role.usernameTemplate } : {}),
    },
    engine,
  );
  if (role.creationStatements.length === 0) problems.push({ field: 'creation_statements', message: 'no creation statements' });
  if (problems.length > 0)
    throw serviceUnavailable(`database role ${role.id} is misconfigured: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`);
  try {
    return newUsername(role.usernameTemplate, role.name, engine);
  } catch (error) {
    throw serviceUnavailable(`database role ${role.id} is misconfigured: ${(error as Error).message}`);
  }
}

/** What an audit entry says of a failure: the phase and the server's or the table's error code; never a statement or value. */
function failureDetail(error: unknown): { phase: string; code: string } {
  if (error instanceof DatabaseError) return { phase: error.phase, code: error.code };
  if (error instanceof TxConditionFailed) return { phase: 'record', code: 'condition_failed' };
  return { phase: 'unknown', code: 'unknown' };
}

/** A failed issuance before the lease was committed is audited too (nothing was recorded, nothing is left). */
async function auditFailure(ctx: CallContext, role: DatabaseRole, error: unknown): Promise<void> {
  await recordAudit(ctx, ctx.principal.tenantId, {
    action: 'database.lease_issue',
    outcome: 'failure',
    resource: { type: 'database_role', id: role.id, name: role.name },
    detail: { ...failureDetail(error), cleaned_up: true },
  }).catch((err: unknown) => logger.warn('could not audit a failed lease issuance', { error: err as Error }));
}

const revokedView = (lease: LeaseRecord, already: boolean): RevokedLease => ({
  lease_id: lease.id,
  role_id: lease.role_id,
  username: lease.username,
  status: 'revoked',
  expires_at: lease.expires_at,
  revoked_at: lease.revoked_at!,
  already_revoked: already,
});

/**
 * Revokes a lease: the revocation statements run on the server (login locked, sessions
 * ended, login dropped: lib/database/logins.ts revokeLogin), then the lease is marked
 * revoked. Idempotent: a lease revoked before (by a call or the sweeper) answers the same
 * record with `already_revoked: true` and touches nothing. Unknown, foreign, pending and
 * failed leases → 404; server unreachable or refusing → 503 and the lease stays active.
 */
export async function revokeLease(ctx: CallContext, leaseId: string, opts: { by?: 'api' | 'sweeper' } = {}): Promise<RevokedLease> {
  const tid = ctx.principal.tenantId;
  const lease = await getLease(tid, leaseId);
  if (!lease || lease.status === 'pending' || lease.status === 'failed') throw notFound('lease');
  if (lease.status === 'revoked') return revokedView(lease, true);
  const conn = await loadConnection(tid, lease.connection_id);
  let existed: boolean;
  try {
    const session = await openAdminSession(conn.settings);
    try {
      ({ existed } = await revokeLogin(session, lease.username, lease.revocation_statements));
    } finally {
      await session.close();
    }
  } catch (error) {
    throw asUnavailable(error);
  }
  const revokedAt = nowIso();
  const by = opts.by ?? 'api';
  try {
    await commit(
      ctx,
      tid,
      [
        {
          Update: {
            TableName: tableName(),
            Key: keys.lease(tid, lease.id),
            UpdateExpression: 'SET #s = :revoked, revoked_at = :at, revoked_by = :by, #ttl = :ttl',
            ConditionExpression: '#s = :active',
            ExpressionAttributeNames: { '#s': 'status', '#ttl': 'ttl' },
            ExpressionAttributeValues: {
              ':revoked': 'revoked',
              ':active': 'active',
              ':at': revokedAt,
              ':by': by === 'sweeper' ? 'sweeper' : actorName(ctx),
              ':ttl': epoch(revokedAt) + retention(),
            },
          },
        },
      ],
      {
        action: 'database.lease_revoke',
        resource: { type: 'database_lease', id: lease.id, name: lease.username },
        detail: {
          role_id: lease.role_id,
          connection_id: lease.connection_id,
          by,
          login_existed: existed,
          expired: Date.parse(lease.expires_at) <= Date.now(),
        },
        event: {
          type: 'lease.revoked',
          data: { id: lease.id, resource_id: lease.connection_id, role_id: lease.role_id, expires_at: lease.expires_at },
        },
      },
    );
  } catch (error) {
    if (error instanceof TxConditionFailed) {
      const again = await getLease(tid, lease.id);
      if (again?.status === 'revoked') return revokedView(again, true);
    }
    throw error;
  }
  return revokedView({ ...lease, status: 'revoked', revoked_at: revokedAt }, false);
}

/**
 * A lease that never became active (issuance crashed, or its login could not be dropped at
 * once): drop the login if any, then forget the record. Used by the sweeper.
 */
export async function cleanUpAbandoned(lease: LeaseRecord): Promise<boolean> {
  if (!(await dropQuietly(undefined, lease))) return false;
  await deleteUnfinishedLease(lease.tenant_id, lease.id).catch(() => undefined);
  return true;
}

/** Active leases of a connection in an account (rotation reports them; it never touches them). */
export async function countActiveLeases(tenantId: string, connectionId: string): Promise<number> {
  return queryCount({
    pk: keys.tenant(tenantId).pk,
    sk: { prefix: keys.leasePrefix },
    filter: {
      expression: '#s = :active AND connection_id = :c AND expires_at > :now',
      names: { '#s': 'status' },
      values: { ':active': 'active', ':c': connectionId, ':now': nowIso() },
    },
  });
}

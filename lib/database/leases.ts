import { entity } from '../store/entity.js';
import * as z from 'zod/v4';
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { CallContext } from '../auth/principal.js';
import { commit, recordAudit } from '../audit/audit.js';
import { config } from '../config.js';
import { badRequest, notFound, serviceUnavailable } from '../http/errors.js';
import { logger } from '../http/logger.js';
import { newId, nowIso } from '../ids.js';
import { db, tableName } from '../store/client.js';
import { queryCount } from '../store/pagination.js';
import { keys } from '../store/keys.js';
import { actorName } from '../store/resources.js';
import { TxConditionFailed, type TxItem } from '../store/tx.js';
import { DatabaseError } from './errors.js';
import { createLogin, revokeLogin } from './logins.js';
import { databaseRoleProblems, loadConnection, loadRole, type DatabaseRole } from './records.js';
import { openAdminSession, type AdminSession, type Engine } from './session.js';
import { newPassword, newUsername } from './usernames.js';

/**
 * Database credential leases (the spec's "Database leases"; Vault's database secrets engine
 * is the model). A lease is a login created on the customer's server for a limited time.
 *
 * Lease record `T#<tid> / LEASE#<id>`: role, connection, engine, login name, the role's
 * revocation statements as they were at issue time (so a later change of the role cannot
 * strand a login), status, times, and a DynamoDB TTL (`ttl`) some days after it ends
 * (LEASE_RETENTION_DAYS). The password is never stored. While a lease is not revoked it is
 * in the sparse expiry index gsi1 `LEASES / <expires_at>#<tid>#<id>`, which the sweeper
 * queries for `< now`; revocation removes it from the index.
 *
 * Statuses: `pending` (written before anything runs on the server, so a crash between
 * CREATE and the record cannot leave an untracked login: the sweeper cleans it at its
 * expiry, at the earliest 5 minutes after it was written), `active` (delivered), `revoked`, and `failed` (issuance failed and the login
 * could not be cleaned up at once: kept, out of the API's sight, for the sweeper to retry
 * now). The API shows only active and revoked leases; pending and failed ones are 404.
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
  }),
);
const toLease = (item: Record<string, unknown>): LeaseRecord => LeaseItem.parse(item);

const epoch = (iso: string) => Math.floor(Date.parse(iso) / 1000);
const PENDING_GRACE_MS = 5 * 60_000;
const retention = () => config().LEASE_RETENTION_DAYS * 86_400;

export async function getLease(tenantId: string, id: string): Promise<LeaseRecord | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.lease(tenantId, id), ConsistentRead: true }));
  return out.Item ? toLease(out.Item) : undefined;
}

/** A database failure as the API's 503 (its message is already sanitised); anything else unchanged. */
export function asUnavailable(error: unknown): unknown {
  if (error instanceof DatabaseError) return serviceUnavailable(error.message, error);
  return error;
}

async function deleteLease(tenantId: string, id: string): Promise<void> {
  await db().send(new DeleteCommand({ TableName: tableName(), Key: keys.lease(tenantId, id) }));
}

/** Best-effort removal of whatever login exists under this name; true when the server confirmed it. */
async function dropQuietly(session: AdminSession | undefined, lease: LeaseRecord): Promise<boolean> {
  try {
    const s = session ?? (await openAdminSession((await loadConnection(lease.tenant_id, lease.connection_id)).settings));
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

/** Keeps a lease whose login could not be removed, for the sweeper's next run. */
async function keepForSweeper(lease: LeaseRecord): Promise<void> {
  const at = nowIso();
  await db()
    .send(
      new PutCommand({
        TableName: tableName(),
        Item: {
          ...keys.lease(lease.tenant_id, lease.id),
          ...keys.leaseExpiryIndex(lease.tenant_id, lease.id, at),
          ...lease,
          status: 'failed',
          ttl: epoch(lease.expires_at) + retention(),
        },
      }),
    )
    .catch((error: unknown) =>
      logger.error('could not record a failed lease for cleanup', { tenant_id: lease.tenant_id, lease_id: lease.id, error: error as Error }),
    );
}

/**
 * Issues a lease: a unique login on the role's connection, created by the role's creation
 * statements, valid for `ttlSeconds` (default the role's default_ttl_seconds, at most its
 * max_ttl_seconds). Not retried: when the server refuses, whatever was created is dropped
 * again and the pending record deleted (PostgreSQL rolls the statements back as one
 * transaction; MySQL/MariaDB DDL commits at once, so the login is revoked), then 503.
 * Unknown or foreign role → 404; missing or unusable connection, unreachable server → 503.
 * Reused by the agents' `database.issue` grant with the device's CallContext.
 */
export async function issueLease(ctx: CallContext, roleId: string, opts: { ttlSeconds?: number } = {}): Promise<IssuedLease> {
  const tid = ctx.principal.tenantId;
  const role = await loadRole(tid, roleId);
  const ttl = opts.ttlSeconds ?? role.defaultTtlSeconds;
  if (ttl > role.maxTtlSeconds) {
    throw badRequest(`ttl_seconds exceeds the role's max_ttl_seconds (${role.maxTtlSeconds})`, [
      { path: 'body.ttl_seconds', message: `at most ${role.maxTtlSeconds}` },
    ]);
  }
  const conn = await loadConnection(tid, role.connectionId);
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
    status: 'pending',
    revocation_statements: role.revocationStatements,
    created_at: new Date(now).toISOString(),
    expires_at: new Date(now + ttl * 1000).toISOString(),
    ttl_seconds: ttl,
    issued_by: actorName(ctx),
  };
  // Indexed for the sweeper no earlier than PENDING_GRACE from now, so a short lease still
  // being issued is not cleaned up under the issuer's feet; activation sets its real expiry.
  const cleanupAt = new Date(Math.max(now + ttl * 1000, now + PENDING_GRACE_MS)).toISOString();
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...keys.lease(tid, lease.id),
        ...keys.leaseExpiryIndex(tid, lease.id, cleanupAt),
        ...lease,
        ttl: epoch(lease.expires_at) + retention(),
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );

  let session: AdminSession;
  try {
    session = await openAdminSession(conn.settings);
  } catch (error) {
    await deleteLease(tid, lease.id);
    await auditFailure(ctx, role, error, true);
    throw asUnavailable(error);
  }
  try {
    await createLogin(session, role.creationStatements, { name: username, password, expiresAt: new Date(lease.expires_at) });
  } catch (error) {
    const cleaned = await dropQuietly(session, lease);
    if (cleaned) await deleteLease(tid, lease.id);
    else await keepForSweeper(lease);
    await auditFailure(ctx, role, error, cleaned);
    throw asUnavailable(error);
  } finally {
    await session.close();
  }

  const active: TxItem = {
    Update: {
      TableName: tableName(),
      Key: keys.lease(tid, lease.id),
      UpdateExpression: 'SET #s = :active, gsi1sk = :due',
      ConditionExpression: '#s = :pending',
      ExpressionAttributeNames: { '#s': 'status' },
      ExpressionAttributeValues: {
        ':active': 'active',
        ':pending': 'pending',
        ':due': keys.leaseExpiryIndex(tid, lease.id, lease.expires_at).gsi1sk,
      },
    },
  };
  try {
    await commit(ctx, tid, [active], {
      action: 'database.lease_issue',
      resource: { type: 'database_lease', id: lease.id, name: username },
      detail: { role_id: role.id, connection_id: lease.connection_id, engine, ttl_seconds: ttl, expires_at: lease.expires_at },
      event: { type: 'lease.issued', data: { id: lease.id, resource_id: lease.connection_id, role_id: role.id, expires_at: lease.expires_at } },
    });
  } catch (error) {
    // The caller will not receive the password: take the login back.
    if (await dropQuietly(undefined, lease)) await deleteLease(tid, lease.id).catch(() => undefined);
    else await keepForSweeper(lease);
    if (error instanceof TxConditionFailed)
      throw serviceUnavailable('the lease could not be recorded; its login was removed again and nothing was issued', error);
    throw error;
  }
  return { lease_id: lease.id, username, password, expires_at: lease.expires_at, ttl_seconds: ttl };
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

/** A failed issuance is audited too (metadata: phase and error code; never a statement or value). */
async function auditFailure(ctx: CallContext, role: DatabaseRole, error: unknown, cleanedUp: boolean): Promise<void> {
  const e = error instanceof DatabaseError ? { phase: error.phase, code: error.code } : { phase: 'unknown', code: 'unknown' };
  await recordAudit(ctx, ctx.principal.tenantId, {
    action: 'database.lease_issue',
    outcome: 'failure',
    resource: { type: 'database_role', id: role.id, name: role.name },
    detail: { ...e, cleaned_up: cleanedUp },
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
            UpdateExpression: 'SET #s = :revoked, revoked_at = :at, revoked_by = :by, #ttl = :ttl REMOVE gsi1pk, gsi1sk',
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
  await db()
    .send(
      new DeleteCommand({
        TableName: tableName(),
        Key: keys.lease(lease.tenant_id, lease.id),
        ConditionExpression: '#s IN (:p, :f)',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':p': 'pending', ':f': 'failed' },
      }),
    )
    .catch(() => undefined);
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

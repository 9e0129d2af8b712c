import type { CallContext } from '../auth/principal.js';
import { conflict, HttpError, serviceUnavailable } from '../core/errors.js';
import { logger } from '../core/logger.js';
import { newId, nowIso } from '../ids.js';
import { etagOf, updateResource } from '../resources/store.js';
import { DatabaseError } from './errors.js';
import { asUnavailable, countActiveLeases } from './leases.js';
import { setAdminPassword } from './logins.js';
import { databaseRoleProblems, loadConnection, loadRole } from './records.js';
import { openAdminSession, type AdminSession } from './session.js';
import { releaseLock, takeRotationLock } from './store.js';
import { newPassword } from './usernames.js';

/**
 * POST /database/roles/{id}/rotate: a new admin password for the role's connection, on the
 * server and in the stored integration, atomic from the caller's view:
 *
 * 1. one rotation per connection at a time (a lock item `DBLOCK#<connection>`, 60 s), so a
 *    rollback always restores the password that is stored;
 * 2. on the server, in a session opened with the stored password: the role's
 *    rotation_statements, else ALTER ROLE CURRENT_USER … PASSWORD (PostgreSQL) / ALTER USER
 *    <current account> IDENTIFIED BY (MySQL/MariaDB);
 * 3. a new session with the new password proves it works (else the old one is restored);
 * 4. the integration is updated with the new password, conditional on the version read in
 *    step 1 (a new version; the old version keeps the old password in its history);
 * 5. if storing fails, the still-open session sets the old password back and the call fails
 *    (409 when the integration changed meanwhile, else 503): nothing changed. Only if that
 *    rollback fails too is the server left with a password the service does not hold; the
 *    answer (503) says so and the admin must set it again with PUT /api/v1/integrations/{id}.
 *
 * Outstanding leases are separate logins and are not touched (spec: rotation is not
 * revocation); the answer counts them.
 */
interface RotationResult {
  readonly role_id: string;
  readonly connection_id: string;
  readonly connection_version: number;
  readonly rotated_at: string;
  readonly outstanding_leases: number;
  readonly leases_revoked: false;
  readonly note: string;
}

const LOCK_SECONDS = 60;

async function acquireLock(tenantId: string, connectionId: string): Promise<string> {
  const owner = newId();
  const now = Math.floor(Date.now() / 1000);
  if (!(await takeRotationLock(tenantId, connectionId, owner, now, LOCK_SECONDS)))
    throw conflict('a rotation of this connection is in progress; try again when it has finished', 'rotation_in_progress');
  return owner;
}

export async function rotateRoleConnection(ctx: CallContext, roleId: string): Promise<RotationResult> {
  const tid = ctx.principal.tenantId;
  const role = await loadRole(tid, roleId);
  const first = await loadConnection(tid, role.connectionId);
  const problems = databaseRoleProblems({ rotation_statements: role.rotationStatements }, first.settings.engine);
  if (problems.length > 0)
    throw serviceUnavailable(`database role ${role.id} is misconfigured: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`);

  const owner = await acquireLock(tid, role.connectionId);
  try {
    // Read again under the lock: the version to update and the password to restore.
    const conn = await loadConnection(tid, role.connectionId);
    const old = conn.settings;
    const fresh = newPassword();
    let session: AdminSession;
    try {
      session = await openAdminSession(old);
    } catch (error) {
      throw asUnavailable(error);
    }
    try {
      const restore = async (): Promise<boolean> => {
        try {
          await setAdminPassword(session, role.rotationStatements, old.username, old.password);
          return true;
        } catch (error) {
          logger.error('database admin password rollback failed', {
            tenant_id: tid,
            connection_id: old.id,
            code: error instanceof DatabaseError ? error.code : 'unknown',
          });
          return false;
        }
      };
      try {
        await setAdminPassword(session, role.rotationStatements, old.username, fresh);
      } catch (error) {
        throw asUnavailable(error);
      }
      try {
        const check = await openAdminSession({ ...old, password: fresh });
        await check.close();
      } catch (error) {
        const restored = await restore();
        throw serviceUnavailable(
          `the new admin password did not open a session (${error instanceof DatabaseError ? error.code : 'unknown'}); ${restored ? 'the old password was restored and nothing changed' : 'restoring the old password failed too: set the current password with PUT /api/v1/integrations/' + old.id}`,
          error,
        );
      }
      let version: number;
      try {
        const out = await updateResource<Record<string, unknown>, Record<string, unknown>>(
          ctx,
          'integration',
          old.id,
          (_current, secret) => ({ secret: { ...(secret ?? {}), password: fresh } }),
          (rec) => ({
            action: 'database.connection_rotate',
            resource: { type: 'integration', id: rec.id, name: rec.name },
            detail: { role_id: role.id, version: rec.version },
            event: { type: 'credential.updated', data: { id: rec.id, type: 'integration', name: rec.name, version: rec.version } },
          }),
          { ifMatch: etagOf(conn.record) },
        );
        version = out.record.version;
      } catch (error) {
        const restored = await restore();
        if (!restored) {
          throw serviceUnavailable(
            `the new admin password could not be stored and restoring the old one on the server failed: set the current password with PUT /api/v1/integrations/${old.id}`,
            error,
          );
        }
        if (error instanceof HttpError && error.status === 409) {
          throw conflict('the connection was changed during the rotation; the old password was restored and nothing changed', 'stale_etag');
        }
        throw serviceUnavailable(
          'the new admin password could not be stored; the old password was restored on the server and nothing changed',
          error,
        );
      }
      const outstanding = await countActiveLeases(tid, old.id);
      return {
        role_id: role.id,
        connection_id: old.id,
        connection_version: version,
        rotated_at: nowIso(),
        outstanding_leases: outstanding,
        leases_revoked: false,
        note: `Only the connection's admin password changed. Rotation does not revoke leases: the ${outstanding} outstanding lease(s) keep working until they expire or are revoked with DELETE /api/v1/database/leases/{id}.`,
      };
    } finally {
      await session.close();
    }
  } finally {
    await releaseLock(tid, role.connectionId, owner);
  }
}

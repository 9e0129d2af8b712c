import { createHash } from 'node:crypto';
import { DatabaseError } from './errors.js';
import type { AdminSession } from './session.js';
import { renderStatement, TemplateError, type TemplateValues } from './template.js';

/**
 * What the service does on a database server, per engine: create a lease's login from the
 * role's creation statements, revoke it, and change the admin's own password. Every
 * value reaches SQL either as a server-side parameter ($1 / ?) or through the driver's
 * escaping (rendered templates); the service's own statements interpolate only values it
 * escaped itself.
 */

/** `{{expiration}}`: ISO-8601 UTC for PostgreSQL (VALID UNTIL takes it); `YYYY-MM-DD HH:MM:SS` UTC for MySQL/MariaDB. */
function formatExpiration(dialect: AdminSession['dialect'], at: Date): string {
  const iso = at.toISOString();
  return dialect === 'postgresql' ? iso : iso.slice(0, 19).replace('T', ' ');
}

/** Renders every statement before anything runs: a bad template fails with nothing done. */
function renderAll(
  s: AdminSession,
  templates: readonly string[],
  values: TemplateValues,
  phase: 'create' | 'revoke' | 'rotate',
  what: string,
): string[] {
  return templates.map((t, i) => {
    try {
      return renderStatement(t, s.dialect, values, s.escape);
    } catch (error) {
      if (error instanceof TemplateError) throw new DatabaseError(phase, 'TEMPLATE', `${what} ${i + 1} is misconfigured: ${error.message}`);
      throw error;
    }
  });
}

/** Runs statements; on PostgreSQL inside one transaction (its DDL is transactional: all or nothing). */
async function runAll(s: AdminSession, statements: readonly string[], phase: 'revoke' | 'rotate', what: string): Promise<void> {
  if (s.dialect === 'postgresql') await s.exec('BEGIN', phase, 'BEGIN');
  try {
    for (const [i, sql] of statements.entries()) await s.exec(sql, phase, `${what} ${i + 1}`);
    if (s.dialect === 'postgresql') await s.exec('COMMIT', phase, 'COMMIT');
  } catch (error) {
    if (s.dialect === 'postgresql') await s.exec('ROLLBACK', phase, 'ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/**
 * A lease's login, to be created from the role's creation statements (rendered when this is
 * made: a bad template fails before anything runs or is recorded). `run` executes them and
 * checks that they created exactly the login `{{name}}`; on PostgreSQL the service also sets
 * `VALID UNTIL` to the lease's expiry itself, so the server refuses the password after it
 * whatever the statements said.
 *
 * PostgreSQL (transactional DDL): `run` leaves its transaction open, so nothing exists for
 * anyone else until `commit`; `rollback`, a failure inside `run`, or the session ending
 * (a crash, a dropped connection) leave no login. MySQL/MariaDB (DDL commits at once): each
 * statement is final as it runs, `commit`/`rollback` do nothing, and after a failure the
 * caller removes whatever was created with revokeLogin.
 */
export interface LoginCreation {
  run(): Promise<void>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
}

export function prepareLogin(
  s: AdminSession,
  templates: readonly string[],
  v: { name: string; password: string; expiresAt: Date; serializeOn?: string },
): LoginCreation {
  const expiration = formatExpiration(s.dialect, v.expiresAt);
  const statements = renderAll(s, templates, { name: v.name, password: v.password, expiration }, 'create', 'creation statement');
  const noLogin = () => new DatabaseError('create', 'NO_LOGIN', 'the creation statements did not create the login {{name}}');
  const pg = s.dialect === 'postgresql';
  return {
    async run() {
      if (pg) await s.exec('BEGIN', 'create', 'BEGIN');
      try {
        // issuances of one role queue here instead of failing on each other's catalog rows
        if (pg && v.serializeOn !== undefined)
          await s.query('SELECT pg_catalog.pg_advisory_xact_lock($1::bigint) AS locked', [advisoryKey(v.serializeOn)], 'create', 'the issuance lock');
        for (const [i, sql] of statements.entries()) await s.exec(sql, 'create', `creation statement ${i + 1}`);
        if (!(await loginExists(s, v.name, 'create'))) throw noLogin();
        if (pg)
          await s.exec(
            `ALTER ROLE ${s.escape.identifier(v.name)} VALID UNTIL ${s.escape.literal(expiration)}`,
            'create',
            'the lease expiry (VALID UNTIL)',
          );
      } catch (error) {
        if (pg) await s.exec('ROLLBACK', 'create', 'ROLLBACK').catch(() => undefined);
        throw error;
      }
    },
    commit: async () => {
      if (pg) await s.exec('COMMIT', 'create', 'COMMIT');
    },
    rollback: async () => {
      if (pg) await s.exec('ROLLBACK', 'create', 'ROLLBACK').catch(() => undefined);
    },
  };
}

/** A PostgreSQL advisory lock key (a signed 64-bit integer, as text) for a name. */
const advisoryKey = (name: string, purpose = 'lease-issue'): string =>
  createHash('sha256').update(`secrets-api:${purpose}:${name}`).digest().readBigInt64BE(0).toString();

/**
 * Runs `body` holding the server's lock on revoking the login `name`: PostgreSQL's session
 * advisory lock, MySQL/MariaDB's named lock (GET_LOCK, at most 30 s). Two revocations of one
 * login at once (the sweeper and a DELETE, two DELETEs) used to run the same statements side by
 * side; the later DROP ROLE failed with "tuple concurrently updated" (XX000) and its caller got a
 * 503 for a lease the other had revoked. Serialized, the second finds no login and only ends
 * stray sessions.
 */
async function holdingRevocationLock<T>(s: AdminSession, name: string, body: () => Promise<T>): Promise<T> {
  const key = advisoryKey(name, 'lease-revoke');
  if (s.dialect === 'postgresql') {
    await s.query('SELECT pg_catalog.pg_advisory_lock($1::bigint) AS locked', [key], 'revoke', 'the revocation lock');
    try {
      return await body();
    } finally {
      await s.query('SELECT pg_catalog.pg_advisory_unlock($1::bigint) AS unlocked', [key], 'revoke', 'the revocation lock').catch(() => undefined);
    }
  }
  const lock = `secrets-api:revoke:${key}`;
  const [got] = await s.query<{ got: number | string | null }>('SELECT GET_LOCK(?, 30) AS got', [lock], 'revoke', 'the revocation lock');
  if (Number(got?.got) !== 1) throw new DatabaseError('revoke', 'LOCK_TIMEOUT', 'the database did not grant the revocation lock within 30 s');
  try {
    return await body();
  } finally {
    await s.query('SELECT RELEASE_LOCK(?) AS released', [lock], 'revoke', 'the revocation lock').catch(() => undefined);
  }
}

/**
 * PostgreSQL errors after which running the same creation again can succeed: two
 * transactions changed one catalog row at once (two leases' `GRANT … ON items`: the later
 * one waits for the first, then fails with "tuple concurrently updated", XX000), a
 * serialization failure or a deadlock. The whole transaction was rolled back.
 */
export const isConcurrentUpdate = (error: unknown): boolean =>
  error instanceof DatabaseError && error.phase === 'create' && ['XX000', '40001', '40P01'].includes(error.code);

async function loginExists(s: AdminSession, name: string, phase: 'create' | 'revoke' = 'revoke'): Promise<boolean> {
  if (s.dialect === 'postgresql') {
    return (await s.query('SELECT 1 AS x FROM pg_catalog.pg_roles WHERE rolname = $1', [name], phase, 'the login lookup')).length > 0;
  }
  return (await mysqlHosts(s, name, phase)).length > 0;
}

async function mysqlHosts(s: AdminSession, name: string, phase: 'create' | 'revoke' = 'revoke'): Promise<string[]> {
  const rows = await s.query<{ host: string }>('SELECT Host AS host FROM mysql.user WHERE User = ?', [name], phase, 'the login lookup');
  return rows.map((r) => String(r.host));
}

/** Ends every session of a login (waiting up to 5 s for each on PostgreSQL 14+). */
async function terminateSessions(s: AdminSession, name: string): Promise<void> {
  if (s.dialect === 'postgresql') {
    const sql = (wait: boolean) =>
      `SELECT pg_catalog.pg_terminate_backend(pid${wait ? ', 5000' : ''}) AS ok FROM pg_catalog.pg_stat_activity WHERE usename = $1 AND pid <> pg_catalog.pg_backend_pid()`;
    try {
      await s.query(sql(true), [name], 'revoke', 'session termination');
    } catch (error) {
      if (!(error instanceof DatabaseError) || error.code !== '42883') throw error;
      await s.query(sql(false), [name], 'revoke', 'session termination'); // before PostgreSQL 14
    }
    return;
  }
  const rows = await s.query<{ id: number | string }>(
    'SELECT ID AS id FROM information_schema.PROCESSLIST WHERE USER = ? AND ID <> CONNECTION_ID()',
    [name],
    'revoke',
    'the session lookup',
  );
  for (const r of rows) {
    const id = Number(r.id);
    if (!Number.isSafeInteger(id) || id <= 0) continue;
    try {
      await s.exec(`KILL CONNECTION ${id}`, 'revoke', 'session termination');
    } catch (error) {
      // the session ended by itself meanwhile (ER_NO_SUCH_THREAD)
      if (!(error instanceof DatabaseError) || (error.code !== 'ER_NO_SUCH_THREAD' && error.code !== 'ERRNO_1094')) throw error;
    }
  }
}

/**
 * The PostgreSQL revocation used when a role has none: privileges in the connection's
 * database and its `public` schema are revoked, then the role is dropped. Roles that grant
 * more (other schemas, owned objects) configure their own revocation statements.
 */
const PG_DEFAULT_REVOCATION = [
  'REVOKE ALL PRIVILEGES ON ALL TABLES IN SCHEMA public FROM {{name}}',
  'REVOKE ALL PRIVILEGES ON ALL SEQUENCES IN SCHEMA public FROM {{name}}',
  'REVOKE ALL PRIVILEGES ON ALL FUNCTIONS IN SCHEMA public FROM {{name}}',
  'REVOKE ALL PRIVILEGES ON SCHEMA public FROM {{name}}',
  'DROP ROLE {{name}}',
];

/**
 * Revokes a login, idempotently: (1) if it still exists, it is locked out at once
 * (PostgreSQL NOLOGIN; MySQL/MariaDB ACCOUNT LOCK on each of its hosts), (2) all its
 * sessions are ended, (3) the revocation statements run (the role's, else the default:
 * PostgreSQL revokes in the database and `public` and drops the role; MySQL/MariaDB drops
 * the account on every host). A login that no longer exists only has stray sessions ended,
 * so a second revocation succeeds without running statements that would fail; two at once take
 * turns (holdingRevocationLock).
 */
export async function revokeLogin(s: AdminSession, name: string, templates: readonly string[]): Promise<{ existed: boolean }> {
  return holdingRevocationLock(s, name, () => revokeHeld(s, name, templates));
}

async function revokeHeld(s: AdminSession, name: string, templates: readonly string[]): Promise<{ existed: boolean }> {
  if (s.dialect === 'postgresql') {
    const existed = await loginExists(s, name);
    const ident = s.escape.identifier(name);
    if (existed) await s.exec(`ALTER ROLE ${ident} NOLOGIN`, 'revoke', 'the login lock');
    await terminateSessions(s, name);
    if (!existed) return { existed };
    let statements = renderAll(s, templates.length > 0 ? templates : PG_DEFAULT_REVOCATION, { name }, 'revoke', 'revocation statement');
    if (templates.length === 0) {
      const [db] = await s.query<{ d: string }>('SELECT pg_catalog.current_database() AS d', [], 'revoke', 'the database lookup');
      statements = [`REVOKE ALL PRIVILEGES ON DATABASE ${s.escape.identifier(String(db?.d))} FROM ${ident}`, ...statements];
    }
    await runAll(s, statements, 'revoke', 'revocation statement');
    return { existed };
  }
  const hosts = await mysqlHosts(s, name);
  const accounts = hosts.map((h) => `${s.escape.literal(name)}@${s.escape.literal(h)}`);
  for (const a of accounts) await s.exec(`ALTER USER ${a} ACCOUNT LOCK`, 'revoke', 'the login lock');
  await terminateSessions(s, name);
  if (hosts.length === 0) return { existed: false };
  const statements =
    templates.length > 0 ? renderAll(s, templates, { name }, 'revoke', 'revocation statement') : accounts.map((a) => `DROP USER IF EXISTS ${a}`);
  await runAll(s, statements, 'revoke', 'revocation statement');
  return { existed: true };
}

/**
 * Changes the admin's own password: the role's rotation statements ({{name}} = the admin
 * login, {{password}} = the new password) or the default (PostgreSQL `ALTER ROLE
 * CURRENT_USER … PASSWORD`; MySQL/MariaDB `ALTER USER '<user>'@'<host>' IDENTIFIED BY` for
 * the account CURRENT_USER() names).
 */
export async function setAdminPassword(s: AdminSession, templates: readonly string[], admin: string, password: string): Promise<void> {
  if (templates.length > 0) {
    const statements = renderAll(s, templates, { name: admin, password }, 'rotate', 'rotation statement');
    await runAll(s, statements, 'rotate', 'rotation statement');
    return;
  }
  if (s.dialect === 'postgresql') {
    await s.exec(`ALTER ROLE CURRENT_USER WITH PASSWORD ${s.escape.literal(password)}`, 'rotate', 'the password change');
    return;
  }
  const [row] = await s.query<{ u: string }>('SELECT CURRENT_USER() AS u', [], 'rotate', 'the account lookup');
  const current = String(row?.u ?? '');
  const at = current.lastIndexOf('@');
  if (at <= 0) throw new DatabaseError('rotate', 'UNKNOWN_ACCOUNT', 'the database did not name the admin account');
  const account = `${s.escape.literal(current.slice(0, at))}@${s.escape.literal(current.slice(at + 1))}`;
  await s.exec(`ALTER USER ${account} IDENTIFIED BY ${s.escape.literal(password)}`, 'rotate', 'the password change');
}

import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import pg from 'pg';
import mysql from 'mysql2/promise';

/**
 * Real database servers for the lease tests: the machine's PostgreSQL (127.0.0.1:5432,
 * postgres, trust) and MariaDB (127.0.0.1:3306, root, no password). Each suite creates its
 * own database, an admin login with just the privileges the service needs, a table the
 * leases may read and a sentinel table injection attempts would like to drop; cleanup()
 * drops all of it and every login the suite's leases left.
 *
 * PostgreSQL here authenticates 127.0.0.1 by `trust` (pg_hba), so a wrong password still
 * logs in: password checks on PostgreSQL are made against the server's SCRAM verifier
 * (pg_authid), exactly what password authentication would compare. MariaDB checks
 * passwords for real.
 */
export const PG = { host: '127.0.0.1', port: 5432 };
export const MY = { host: '127.0.0.1', port: 3306 };

export interface TestServer {
  readonly engine: 'postgresql' | 'mariadb';
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly admin: string;
  readonly adminPassword: string;
  /**
   * Six characters every role name of the suite starts with: lease logins are
   * `v_<first 8 letters/digits of the role name>_…`, so cleanup() finds them all by prefix.
   */
  readonly rolePrefix: string;
  /** Runs SQL as the server's superuser (postgres / root), in the suite's database. */
  su<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Opens a session as a login; throws when the server refuses it. */
  login(user: string, password: string): Promise<Session>;
  /** Whether a login (role / user) exists on the server. */
  exists(user: string): Promise<boolean>;
  /** Whether `password` is the login's current password. */
  passwordIs(user: string, password: string): Promise<boolean>;
  /** Logins whose name starts with `prefix`. */
  loginsLike(prefix: string): Promise<string[]>;
  /** Sessions of a login currently open on the server. */
  sessions(user: string): Promise<number>;
  cleanup(): Promise<void>;
}

export interface Session {
  query(sql: string): Promise<unknown[]>;
  close(): Promise<void>;
}

const rand = () => randomBytes(4).toString('hex');
const rolePrefix = () => `l${randomBytes(3).toString('hex').slice(0, 5)}`;

/** SCRAM-SHA-256 verification of a password against a PostgreSQL verifier (RFC 5802/7677). */
export function scramMatches(verifier: string, password: string): boolean {
  const m = /^SCRAM-SHA-256\$(\d+):([^$]+)\$([^:]+):(.+)$/.exec(verifier);
  if (!m) return false;
  const salted = pbkdf2Sync(password.normalize('NFKC'), Buffer.from(m[2]!, 'base64'), Number(m[1]), 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  return createHash('sha256').update(clientKey).digest('base64') === m[3];
}

async function pgClient(user: string, password: string, database: string): Promise<pg.Client> {
  const c = new pg.Client({ ...PG, user, password, database, connectionTimeoutMillis: 5000 });
  c.on('error', () => undefined);
  await c.connect();
  return c;
}

export async function postgresServer(adminPassword: string): Promise<TestServer> {
  const database = `lt_${rand()}`;
  const admin = `lt_adm_${rand()}`;
  const root = await pgClient('postgres', '', 'postgres');
  await root.query(`CREATE ROLE ${admin} LOGIN CREATEROLE PASSWORD ${root.escapeLiteral(adminPassword)}`);
  await root.query(`GRANT pg_signal_backend TO ${admin}`);
  await root.query(`CREATE DATABASE ${database} OWNER ${admin}`);
  const inDb = await pgClient('postgres', '', database);
  await inDb.query(`SET ROLE ${admin}`);
  await inDb.query(`CREATE TABLE items (id int PRIMARY KEY, label text); INSERT INTO items VALUES (1, 'one'), (2, 'two')`);
  await inDb.query(`CREATE TABLE sentinel (id int); INSERT INTO sentinel VALUES (42)`);
  await inDb.query('RESET ROLE');
  const prefix = rolePrefix();
  const server: TestServer = {
    engine: 'postgresql',
    ...PG,
    database,
    admin,
    adminPassword,
    rolePrefix: prefix,
    async su<T>(sql: string, params: unknown[] = []) {
      return (await inDb.query(sql, params)).rows as T[];
    },
    async login(user, password) {
      const c = await pgClient(user, password, database);
      return { query: async (sql) => (await c.query(sql)).rows, close: () => c.end().catch(() => undefined) };
    },
    async exists(user) {
      return (await root.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [user])).rowCount! > 0;
    },
    async passwordIs(user, password) {
      const r = await root.query<{ p: string | null }>('SELECT rolpassword AS p FROM pg_authid WHERE rolname = $1', [user]);
      return r.rows[0]?.p ? scramMatches(r.rows[0].p, password) : false;
    },
    async loginsLike(prefix) {
      const r = await root.query<{ n: string }>("SELECT rolname AS n FROM pg_roles WHERE starts_with(rolname, $1)", [prefix]);
      return r.rows.map((x) => x.n);
    },
    async sessions(user) {
      const r = await root.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE usename = $1', [user]);
      return Number(r.rows[0]?.n ?? 0);
    },
    async cleanup() {
      await inDb.end().catch(() => undefined);
      await root.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
      const leftovers = await root.query<{ n: string }>('SELECT rolname AS n FROM pg_roles WHERE starts_with(rolname, $1)', [`v_${prefix}`]);
      for (const r of leftovers.rows) await root.query(`DROP ROLE IF EXISTS ${root.escapeIdentifier(r.n)}`).catch(() => undefined);
      await root.query(`DROP ROLE IF EXISTS ${admin}`).catch(() => undefined);
      await root.end().catch(() => undefined);
    },
  };
  return server;
}

async function myConn(user: string, password: string, database?: string): Promise<mysql.Connection> {
  const c = await mysql.createConnection({ ...MY, user, password, ...(database ? { database } : {}), connectTimeout: 5000 });
  c.on('error', () => undefined);
  return c;
}

export async function mariadbServer(adminPassword: string): Promise<TestServer> {
  const database = `lt_${rand()}`;
  const admin = `lt_adm_${rand()}`;
  const root = await myConn('root', '');
  await root.query(`CREATE DATABASE ${database}`);
  await root.query(`CREATE TABLE ${database}.items (id int PRIMARY KEY, label text)`);
  await root.query(`INSERT INTO ${database}.items VALUES (1, 'one'), (2, 'two')`);
  await root.query(`CREATE TABLE ${database}.sentinel (id int)`);
  await root.query(`INSERT INTO ${database}.sentinel VALUES (42)`);
  await root.query(`CREATE USER '${admin}'@'%' IDENTIFIED BY ${root.escape(adminPassword)}`);
  // what the service needs: create/lock/drop users, see and end their sessions, find their hosts,
  // and hold (with GRANT OPTION) the privileges the role's statements grant
  await root.query(`GRANT CREATE USER, PROCESS, CONNECTION ADMIN ON *.* TO '${admin}'@'%'`);
  await root.query(`GRANT SELECT ON mysql.* TO '${admin}'@'%'`);
  await root.query(`GRANT ALL PRIVILEGES ON ${database}.* TO '${admin}'@'%' WITH GRANT OPTION`);
  await root.query(`USE ${database}`);
  const prefix = rolePrefix();
  return {
    engine: 'mariadb',
    ...MY,
    database,
    admin,
    adminPassword,
    rolePrefix: prefix,
    async su<T>(sql: string, params: unknown[] = []) {
      const [rows] = await root.query(sql, params);
      return rows as T[];
    },
    async login(user, password) {
      const c = await myConn(user, password, database);
      return { query: async (sql) => (await c.query(sql))[0] as unknown[], close: () => c.end().catch(() => undefined) };
    },
    async exists(user) {
      const [rows] = await root.query('SELECT 1 FROM mysql.user WHERE User = ?', [user]);
      return (rows as unknown[]).length > 0;
    },
    async passwordIs(user, password) {
      try {
        const c = await myConn(user, password);
        await c.end();
        return true;
      } catch {
        return false;
      }
    },
    async loginsLike(prefix) {
      const [rows] = await root.query('SELECT User AS n FROM mysql.user WHERE LEFT(User, ?) = ?', [prefix.length, prefix]);
      return (rows as Array<{ n: string }>).map((r) => r.n);
    },
    async sessions(user) {
      const [rows] = await root.query('SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE USER = ?', [user]);
      return Number((rows as Array<{ n: number }>)[0]?.n ?? 0);
    },
    async cleanup() {
      await root.query(`DROP DATABASE IF EXISTS ${database}`).catch(() => undefined);
      const [rows] = await root.query('SELECT User AS u, Host AS h FROM mysql.user WHERE User = ? OR LEFT(User, ?) = ?', [admin, prefix.length + 2, `v_${prefix}`]);
      for (const r of rows as Array<{ u: string; h: string }>) await root.query(`DROP USER IF EXISTS ${root.escape(r.u)}@${root.escape(r.h)}`).catch(() => undefined);
      await root.end().catch(() => undefined);
    },
  };
}

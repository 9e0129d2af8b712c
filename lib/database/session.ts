import { connect as netConnect, isIP } from 'node:net';
import pg from 'pg';
import mysql from 'mysql2/promise';
import { config } from '../config.js';
import { BlockedDestination, literalAddress, resolveChecked } from '../events/ssrf.js';
import { databaseConnectMs, outboundTimeoutMs } from '../events/timeouts.js';
import { connectError, DatabaseError, statementError, type DbPhase } from './errors.js';
import type { Dialect, Escaper } from './template.js';
import type { ConnectionSettings, TlsSettings } from './settings.js';

export type { ConnectionSettings, Engine } from './settings.js';

/**
 * One admin session on a customer's database server, over the engine's own driver (`pg`,
 * `mysql2`). Two kinds of SQL go through it: `exec` runs a statement rendered from a role's
 * template (already escaped by lib/database/template.ts with this session's escaper), and
 * `query` runs the service's own fixed SQL with server-side parameters. Every driver error
 * is replaced by a sanitised DatabaseError (lib/database/errors.ts) before it leaves.
 */
export interface AdminSession {
  readonly dialect: Dialect;
  readonly escape: Escaper;
  /** A rendered role statement. `what` names it in errors ("creation statement 2"). */
  exec(sql: string, phase: DbPhase, what: string): Promise<void>;
  /** The service's own SQL, with server-side parameters ($1 / ?). */
  query<T extends Record<string, unknown>>(sql: string, params: readonly (string | number)[], phase: DbPhase, what: string): Promise<T[]>;
  close(): Promise<void>;
}

const HOST_RE = /^(?=.{1,253}$)([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;

/**
 * The destination rule of every outbound path (lib/events/ssrf.ts): public unicast addresses;
 * a private one (RDS in a VPC) only inside a block the platform operator opened for the
 * connection's account (config DATABASE_PRIVATE_NETWORKS); loopback only with
 * DATABASE_ALLOW_LOOPBACK (the local runtime; config refuses it with KMS). Host names are
 * resolved and every address checked; the driver then connects to the checked address itself
 * (never resolving the name again, so no DNS rebinding between check and connect), TLS still
 * verifying the server's name. A Unix socket path (pg treats a host starting with "/" as one)
 * is not a host. Returns the address to connect to.
 */
async function checkHost(c: ConnectionSettings): Promise<string> {
  const cfg = config();
  const policy = {
    allowLoopback: cfg.DATABASE_ALLOW_LOOPBACK,
    privateNetworks: c.tenantId ? (cfg.DATABASE_PRIVATE_NETWORKS[c.tenantId] ?? []) : [],
  };
  const bare = c.host.replace(/^\[|\]$/g, '');
  if (!literalAddress(bare) && !HOST_RE.test(bare))
    throw new DatabaseError('connect', 'BAD_HOST', "the connection's host is not a host name or IP address");
  try {
    return (await resolveChecked(bare, policy))[0]!.address;
  } catch (error) {
    if (error instanceof BlockedDestination) {
      const why = error.reason ?? 'refused address';
      throw new DatabaseError('connect', 'BLOCKED_ADDRESS', `the connection's host resolves to a ${why}, which the service does not connect to`);
    }
    throw connectError(error, `of host ${bare}`);
  }
}

const clientCert = (tls: TlsSettings) => (tls.cert && tls.key ? { cert: tls.cert, key: tls.key } : {});

function pgSsl(tls: TlsSettings, host: string): pg.ClientConfig['ssl'] {
  if (tls.mode === 'disable') return false;
  if (tls.mode === 'require') return { rejectUnauthorized: false, ...clientCert(tls) };
  return {
    rejectUnauthorized: true,
    ...clientCert(tls),
    ...(tls.ca ? { ca: tls.ca } : {}),
    ...(tls.mode === 'verify-ca' ? { checkServerIdentity: () => undefined } : { servername: isIP(host) ? undefined : host }),
  };
}

function mysqlSsl(tls: TlsSettings): mysql.ConnectionOptions['ssl'] {
  if (tls.mode === 'disable') return undefined;
  if (tls.mode === 'require') return { rejectUnauthorized: false, ...clientCert(tls) };
  return { rejectUnauthorized: true, ...clientCert(tls), verifyIdentity: tls.mode === 'verify-full', ...(tls.ca ? { ca: tls.ca } : {}) };
}

const connectTimeout = (c: ConnectionSettings) => databaseConnectMs(c.connectTimeoutMs);

async function openPg(c: ConnectionSettings, address: string, where: string): Promise<AdminSession> {
  const statementMs = outboundTimeoutMs('database-statement');
  const client = new pg.Client({
    // the checked address; TLS verifies the name (pgSsl's servername)
    host: address,
    port: c.port,
    user: c.username,
    password: c.password,
    database: c.database ?? undefined,
    ssl: pgSsl(c.tls, c.host),
    connectionTimeoutMillis: connectTimeout(c),
    statement_timeout: statementMs,
    query_timeout: statementMs + 1000,
    application_name: 'secrets-api',
  });
  // A server-side termination after connect arrives as an 'error' event: never crash on it.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw connectError(error, where);
  }
  return {
    dialect: 'postgresql',
    escape: { identifier: (v) => client.escapeIdentifier(v), literal: (v) => client.escapeLiteral(v) },
    async exec(sql, phase, what) {
      try {
        await client.query(sql);
      } catch (error) {
        throw statementError(error, phase, what);
      }
    },
    async query<T extends Record<string, unknown>>(sql: string, params: readonly (string | number)[], phase: DbPhase, what: string) {
      try {
        return (await client.query<T>(sql, [...params])).rows;
      } catch (error) {
        throw statementError(error, phase, what);
      }
    },
    close: () => client.end().catch(() => undefined),
  };
}

async function openMysql(c: ConnectionSettings, address: string, where: string): Promise<AdminSession> {
  let conn: mysql.Connection;
  try {
    conn = await mysql.createConnection({
      // the name for TLS's server identity; the socket goes to the checked address
      host: c.host,
      port: c.port,
      stream: () => netConnect({ port: c.port, host: address, noDelay: true }),
      user: c.username,
      password: c.password,
      ...(c.database ? { database: c.database } : {}),
      ssl: mysqlSsl(c.tls),
      connectTimeout: connectTimeout(c),
      multipleStatements: false,
      supportBigNumbers: true,
    });
  } catch (error) {
    throw connectError(error, where);
  }
  conn.on('error', () => undefined);
  const wrap = async <T>(phase: DbPhase, what: string, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      throw statementError(error, phase, what);
    }
  };
  try {
    // The escaping of mysql2 (backslashes; '"' quotes a string) assumes the default
    // sql_mode: drop NO_BACKSLASH_ESCAPES and ANSI_QUOTES for this session, and bound
    // every statement's run time (MariaDB's max_statement_time, in seconds).
    const [rows] = await conn.query('SELECT @@SESSION.sql_mode AS m');
    const mode = String((rows as Array<{ m: string }>)[0]?.m ?? '')
      .split(',')
      .filter((m) => m && m !== 'NO_BACKSLASH_ESCAPES' && m !== 'ANSI_QUOTES' && m !== 'ANSI')
      .join(',');
    await conn.query(`SET SESSION sql_mode = ${conn.escape(mode)}`);
    await conn.query(`SET SESSION max_statement_time = ${Math.ceil(outboundTimeoutMs('database-statement') / 1000)}`).catch(() => undefined);
  } catch (error) {
    await conn.end().catch(() => undefined);
    throw connectError(error, where);
  }
  return {
    dialect: 'mysql',
    escape: { identifier: (v) => conn.escapeId(v), literal: (v) => conn.escape(v) },
    exec: (sql, phase, what) => wrap(phase, what, async () => void (await conn.query(sql))),
    query: <T extends Record<string, unknown>>(sql: string, params: readonly (string | number)[], phase: DbPhase, what: string) =>
      wrap(phase, what, async () => (await conn.execute(sql, [...params]))[0] as unknown as T[]),
    close: () => conn.end().catch(() => undefined),
  };
}

/** Connects as the connection's admin user. Throws DatabaseError (phase `connect`). */
export async function openAdminSession(c: ConnectionSettings): Promise<AdminSession> {
  const where = `of connection ${c.id} (${c.host}:${c.port})`;
  const address = await checkHost(c);
  return c.engine === 'postgresql' ? openPg(c, address, where) : openMysql(c, address, where);
}

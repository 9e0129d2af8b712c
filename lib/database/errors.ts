/**
 * Database failures, sanitised. A driver error can carry the statement text (mysql2's
 * `sql`) or a fragment of it in its message ("syntax error at or near …"), and a rendered
 * statement contains a password: so a driver error never leaves lib/database. What does is
 * a DatabaseError whose message is built only from the phase, the statement's position and
 * the server's error code (SQLSTATE or errno name).
 */
export type DbPhase = 'connect' | 'create' | 'revoke' | 'rotate' | 'verify' | 'cleanup' | 'extract';

export class DatabaseError extends Error {
  override name = 'DatabaseError';
  constructor(
    readonly phase: DbPhase,
    /** SQLSTATE (pg), errno name (mysql2) or a Node network code; `unknown` otherwise. */
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const SAFE_CODE = /^[A-Z0-9_]{1,40}$/;

/** The server's or the network's error code, when it looks like one (never free text). */
export function errorCode(error: unknown): string {
  const e = error as { code?: unknown; errno?: unknown } | undefined;
  if (typeof e?.code === 'string' && SAFE_CODE.test(e.code)) return e.code;
  if (typeof e?.errno === 'number') return `ERRNO_${e.errno}`;
  if (error instanceof Error && /does not support SSL/i.test(error.message)) return 'TLS_UNSUPPORTED_BY_SERVER';
  if (error instanceof Error && /timeout/i.test(error.message)) return 'TIMEOUT';
  if (error instanceof Error && /terminated|closed|ended/i.test(error.message)) return 'CONNECTION_LOST';
  return 'unknown';
}

const AUTH_CODES = new Set(['28P01', '28000', 'ER_ACCESS_DENIED_ERROR', 'ER_DBACCESS_DENIED_ERROR', 'ER_ACCOUNT_HAS_BEEN_LOCKED']);
const MISSING_DB = new Set(['3D000', 'ER_BAD_DB_ERROR']);

/** A connection failure, described without anything the driver said. */
export function connectError(error: unknown, where: string): DatabaseError {
  const code = errorCode(error);
  const why = AUTH_CODES.has(code)
    ? 'refused the stored admin credentials'
    : MISSING_DB.has(code)
      ? 'has no such database'
      : 'is unreachable or refused the connection';
  return new DatabaseError('connect', code, `the database server ${where} ${why} (${code})`);
}

export function statementError(error: unknown, phase: DbPhase, what: string): DatabaseError {
  if (error instanceof DatabaseError) return error;
  const code = errorCode(error);
  return new DatabaseError(phase, code, `the database refused ${what} (${code})`);
}

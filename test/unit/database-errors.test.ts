import { describe, expect, it } from 'vitest';
import { connectError, DatabaseError, errorCode, statementError } from '../../lib/database/errors.js';

/** lib/database/errors.ts: a driver error never leaves lib/database with its text; only the phase, position and code do. */
describe('database errors', () => {
  it('errorCode: a code that looks like one, an errno, or a class recognised from the message; never free text', () => {
    expect(errorCode({ code: '28P01' })).toBe('28P01');
    expect(errorCode({ code: 'ER_ACCESS_DENIED_ERROR' })).toBe('ER_ACCESS_DENIED_ERROR');
    expect(errorCode({ code: 'password hunter2 rejected' })).toBe('unknown');
    expect(errorCode({ code: 'X'.repeat(41) })).toBe('unknown');
    expect(errorCode({ code: 'lower' })).toBe('unknown');
    expect(errorCode({ errno: 1045 })).toBe('ERRNO_1045');
    expect(errorCode({ code: 7, errno: '1' })).toBe('unknown');
    expect(errorCode(new Error('The server does not support SSL connections'))).toBe('TLS_UNSUPPORTED_BY_SERVER');
    expect(errorCode(new Error('Connection Timeout'))).toBe('TIMEOUT');
    expect(errorCode(new Error('Connection terminated unexpectedly'))).toBe('CONNECTION_LOST');
    expect(errorCode(new Error('socket closed'))).toBe('CONNECTION_LOST');
    expect(errorCode(new Error('stream ended'))).toBe('CONNECTION_LOST');
    expect(errorCode(new Error('syntax error at or near "hunter2"'))).toBe('unknown');
    expect(errorCode(undefined)).toBe('unknown');
    expect(errorCode('timeout as a string')).toBe('unknown');
  });

  it('connectError: why, in words chosen here, and the code', () => {
    for (const code of ['28P01', '28000', 'ER_ACCESS_DENIED_ERROR', 'ER_DBACCESS_DENIED_ERROR', 'ER_ACCOUNT_HAS_BEEN_LOCKED']) {
      const e = connectError({ code }, 'db.example:5432');
      expect(e).toBeInstanceOf(DatabaseError);
      expect(e).toMatchObject({ name: 'DatabaseError', phase: 'connect', code, message: `the database server db.example:5432 refused the stored admin credentials (${code})` });
    }
    for (const code of ['3D000', 'ER_BAD_DB_ERROR']) expect(connectError({ code }, 'h').message).toBe(`the database server h has no such database (${code})`);
    expect(connectError(new Error('connect ECONNREFUSED, password=hunter2'), 'h').message).toBe('the database server h is unreachable or refused the connection (unknown)');
    expect(connectError({ code: 'ECONNREFUSED' }, 'h').message).toBe('the database server h is unreachable or refused the connection (ECONNREFUSED)');
  });

  it('statementError: the phase and what was refused; a DatabaseError passes through as it is', () => {
    const e = statementError({ code: '42601', message: 'syntax error at or near "s3cr3t"' }, 'create', 'creation statement 2');
    expect(e).toMatchObject({ phase: 'create', code: '42601', message: 'the database refused creation statement 2 (42601)' });
    expect(e.message).not.toContain('s3cr3t');
    const known = new DatabaseError('revoke', 'X', 'already sanitised');
    expect(statementError(known, 'cleanup', 'x')).toBe(known);
  });
});

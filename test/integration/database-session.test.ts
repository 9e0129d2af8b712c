import { beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionSettings } from '../../lib/database/settings.js';
import { useRuntimeConfig } from '../helpers/in-process.js';

/**
 * lib/database/session.ts against the machine's PostgreSQL and MariaDB (127.0.0.1, no TLS
 * configured on either): which hosts are refused before any connection, each TLS mode
 * reaching the server (which refuses TLS), refused credentials, and a working session.
 * Every failure is a DatabaseError of phase connect whose message carries no password.
 */
let session: typeof import('../../lib/database/session.js');
let DatabaseError: typeof import('../../lib/database/errors.js').DatabaseError;
beforeAll(async () => {
  useRuntimeConfig();
  process.env.DATABASE_ALLOW_LOOPBACK = '1';
  session = await import('../../lib/database/session.js');
  ({ DatabaseError } = await import('../../lib/database/errors.js'));
});

const PASSWORD = 'CANARY-db-admin-password';
const pg = (fields: Partial<ConnectionSettings> = {}): ConnectionSettings => ({
  id: 'c-pg', engine: 'postgresql', host: '127.0.0.1', port: 5432, database: 'postgres', username: 'postgres', password: '', tls: { mode: 'disable' }, ...fields,
});
const maria = (fields: Partial<ConnectionSettings> = {}): ConnectionSettings => ({
  id: 'c-my', engine: 'mariadb', host: '127.0.0.1', port: 3306, database: null, username: 'root', password: '', tls: { mode: 'disable' }, ...fields,
});
async function failure(c: ConnectionSettings) {
  try {
    const s = await session.openAdminSession(c);
    await s.close();
    return 'connected';
  } catch (error) {
    expect(error).toBeInstanceOf(DatabaseError);
    expect((error as Error).message).not.toContain(PASSWORD);
    const e = error as InstanceType<typeof DatabaseError>;
    return { phase: e.phase, code: e.code, message: e.message };
  }
}

describe('admin sessions', () => {
  it('a working session on each engine runs the service SQL with parameters', async () => {
    for (const c of [pg(), maria()]) {
      const s = await session.openAdminSession(c);
      const rows = await s.query<{ v: number }>(c.engine === 'postgresql' ? 'SELECT $1::int + 1 AS v' : 'SELECT ? + 1 AS v', [41], 'verify', 'a probe');
      expect(Number(rows[0]!.v)).toBe(42);
      expect(s.dialect).toBe(c.engine === 'postgresql' ? 'postgresql' : 'mysql');
      await s.close();
    }
  });

  it('hosts refused before connecting: not a host name, a link-local or metadata address, a name that does not resolve', async () => {
    expect(await failure(pg({ host: 'bad host!' }))).toEqual({ phase: 'connect', code: 'BAD_HOST', message: "the connection's host is not a host name or IP address" });
    expect(await failure(pg({ host: '/var/run/postgresql' }))).toMatchObject({ code: 'BAD_HOST' });
    for (const host of ['169.254.169.254', '[fe80::1]', '0.0.0.0', '224.0.0.1']) {
      expect(await failure(maria({ host }))).toMatchObject({ phase: 'connect', code: 'BLOCKED_ADDRESS', message: expect.stringMatching(/^the connection's host resolves to a [\w /-]+ address, which the service does not connect to$/) });
    }
    expect(await failure(pg({ host: 'no-such-host.invalid' }))).toMatchObject({ phase: 'connect', message: expect.stringContaining('of host no-such-host.invalid') });
    // a name is resolved, and loopback is allowed here (development)
    expect(await failure(pg({ host: 'localhost' }))).toBe('connected');
  });

  it('every TLS mode asks the server for TLS (these servers refuse it), with or without a CA and client certificate', async () => {
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    for (const tls of [
      { mode: 'require' },
      { mode: 'verify-ca', ca: pem },
      { mode: 'verify-full' },
      { mode: 'verify-full', ca: pem, cert: pem, key: 'k' },
      { mode: 'require', cert: pem, key: 'k' },
    ] as const) {
      const p = await failure(pg({ tls, password: PASSWORD }));
      expect(p, JSON.stringify(tls)).toMatchObject({ phase: 'connect', code: 'TLS_UNSUPPORTED_BY_SERVER' });
      const m = await failure(maria({ tls, password: PASSWORD }));
      expect(m, JSON.stringify(tls)).toMatchObject({ phase: 'connect' });
      expect(m).not.toBe('connected');
    }
    // on a host name, verify-full checks the name
    expect(await failure(pg({ host: 'localhost', tls: { mode: 'verify-full' } }))).toMatchObject({ code: 'TLS_UNSUPPORTED_BY_SERVER' });
  });

  it('refused credentials and a missing database are told apart', async () => {
    expect(await failure(maria({ username: 'no_such_admin', password: PASSWORD }))).toMatchObject({
      code: 'ER_ACCESS_DENIED_ERROR',
      message: expect.stringContaining('refused the stored admin credentials'),
    });
    expect(await failure(maria({ database: 'no_such_database_here' }))).toMatchObject({ code: 'ER_BAD_DB_ERROR', message: expect.stringContaining('has no such database') });
    expect(await failure(pg({ database: 'no_such_database_here' }))).toMatchObject({ code: '3D000', message: expect.stringContaining('has no such database') });
    expect(await failure(pg({ port: 1, connectTimeoutMs: 1000 }))).toMatchObject({ phase: 'connect', message: expect.stringContaining('is unreachable or refused the connection') });
  });
});

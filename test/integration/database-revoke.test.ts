import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionSettings } from '../../lib/database/settings.js';
import { useRuntimeConfig } from '../helpers/in-process.js';

/**
 * lib/database/logins.ts revokeLogin, several at once on one login, against the machine's
 * PostgreSQL and MariaDB: the sweeper and a DELETE of the same lease, or two DELETEs, each on
 * its own admin session. Before the revocation lock, the later DROP ROLE failed with "tuple
 * concurrently updated" (XX000) and its caller answered 503 for a lease the other had revoked
 * (npm test, four source workers: the sweeper's report named the lease as failed).
 */
let session: typeof import('../../lib/database/session.js');
let logins: typeof import('../../lib/database/logins.js');
beforeAll(async () => {
  useRuntimeConfig();
  process.env.DATABASE_ALLOW_LOOPBACK = '1';
  session = await import('../../lib/database/session.js');
  logins = await import('../../lib/database/logins.js');
});

const servers: Record<string, ConnectionSettings> = {
  postgresql: {
    id: 'c-pg',
    engine: 'postgresql',
    host: '127.0.0.1',
    port: 5432,
    database: 'postgres',
    username: 'postgres',
    password: '',
    tls: { mode: 'disable' },
  },
  mariadb: { id: 'c-my', engine: 'mariadb', host: '127.0.0.1', port: 3306, database: null, username: 'root', password: '', tls: { mode: 'disable' } },
};

describe.each(Object.keys(servers))('revoking one login %s times at once', (engine) => {
  it('every revocation succeeds, one of them found the login, and the login is gone', async () => {
    const c = servers[engine]!;
    const name = `v_race_${randomBytes(4).toString('hex')}`;
    const admin = await session.openAdminSession(c);
    try {
      await admin.exec(
        engine === 'postgresql' ? `CREATE ROLE "${name}" WITH LOGIN PASSWORD 'x-${name}'` : `CREATE USER '${name}'@'%' IDENTIFIED BY 'x-${name}'`,
        'create',
        'the test login',
      );
      const sessions = await Promise.all([1, 2, 3].map(() => session.openAdminSession(c)));
      try {
        const outcomes = await Promise.allSettled(sessions.map((s) => logins.revokeLogin(s, name, [])));
        expect(outcomes.map((o) => (o.status === 'rejected' ? String(o.reason) : 'ok'))).toEqual(['ok', 'ok', 'ok']);
        const existed = outcomes.map((o) => (o as PromiseFulfilledResult<{ existed: boolean }>).value.existed);
        expect(existed.filter(Boolean)).toHaveLength(1);
      } finally {
        await Promise.all(sessions.map((s) => s.close()));
      }
      const left =
        engine === 'postgresql'
          ? await admin.query('SELECT 1 AS x FROM pg_catalog.pg_roles WHERE rolname = $1', [name], 'revoke', 'the check')
          : await admin.query('SELECT 1 AS x FROM mysql.user WHERE User = ?', [name], 'revoke', 'the check');
      expect(left).toEqual([]);
    } finally {
      await admin.close();
    }
  });
});

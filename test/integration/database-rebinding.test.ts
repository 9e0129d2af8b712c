import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { ConnectionSettings } from '../../lib/database/settings.js';
import { useRuntimeConfig } from '../helpers/in-process.js';

/**
 * DNS rebinding between the database guard and the driver: the guard (lib/events/ssrf.ts)
 * resolves the connection's host and checks every address; the driver must then connect to
 * that checked address, never resolve the name a second time (a name can answer a public
 * address to the check and a private one to the connect). Here the service's resolver knows
 * `rebind.invalid` as 127.0.0.1 (loopback allowed, development) and the system's resolver does
 * not know it at all: a session opens only when the driver uses the address the guard checked.
 */
vi.mock('node:dns', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:dns')>();
  const lookup = ((host: string, options: unknown, callback: (...args: unknown[]) => void) =>
    host === 'rebind.invalid'
      ? callback(null, [{ address: '127.0.0.1', family: 4 }])
      : (real.lookup as (...args: unknown[]) => void)(host, options, callback)) as typeof real.lookup;
  return { ...real, lookup, default: { ...real, lookup } };
});

let session: typeof import('../../lib/database/session.js');
beforeAll(async () => {
  useRuntimeConfig();
  process.env.DATABASE_ALLOW_LOOPBACK = '1';
  session = await import('../../lib/database/session.js');
});

const settings = (engine: 'postgresql' | 'mariadb'): ConnectionSettings =>
  engine === 'postgresql'
    ? { id: 'c-pg', engine, host: 'rebind.invalid', port: 5432, database: 'postgres', username: 'postgres', password: '', tls: { mode: 'disable' } }
    : { id: 'c-my', engine, host: 'rebind.invalid', port: 3306, database: null, username: 'root', password: '', tls: { mode: 'disable' } };

describe('the driver connects to the address the guard checked', () => {
  it.each(['postgresql', 'mariadb'] as const)('%s: the name is resolved once, by the guard', async (engine) => {
    const s = await session.openAdminSession(settings(engine)).catch((error: Error) => error);
    expect(s instanceof Error ? `${engine} session on host rebind.invalid: ${s.message}` : 'connected').toBe('connected');
    if (!(s instanceof Error)) await s.close();
  });
});

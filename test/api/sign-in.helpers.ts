import { expect } from 'vitest';
import { api } from '../helpers/api.js';
import { useRuntimeConfig } from '../helpers/in-process.js';

/**
 * Sign-in tests: a session opened with the library directly (as a sign-in route does after
 * its proof), for the routes that need one before a sign-in flow runs.
 */
export interface Tokens {
  access_token: string;
  refresh_token: string;
  session_id: string;
  expires_in: number;
  scope: string;
}

export async function librarySession(tenantId: string, email: string): Promise<Tokens> {
  useRuntimeConfig();
  const { getTenant } = await import('../../lib/store/tenants.js');
  const { getUser } = await import('../../lib/users/users.js');
  const { openSession } = await import('../../lib/users/sessions.js');
  const tenant = await getTenant(tenantId);
  const user = await getUser(tenantId, email);
  if (!tenant || !user) throw new Error(`no such account or user: ${tenantId} ${email}`);
  return (await openSession(tenant, user, 'password', { requestId: 'test', sourceIp: null, userAgent: 'vitest' })) as Tokens;
}

export async function refresh(token: string) {
  return api('POST', '/api/v1/auth/refresh', { body: { refresh_token: token } });
}

/** The token still admits requests (an admin session lists secrets). */
export async function admitted(accessToken: string): Promise<boolean> {
  const res = await api('GET', '/api/v1/secrets', { key: accessToken });
  expect([200, 401]).toContain(res.status);
  return res.status === 200;
}

import { randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallContext } from '../../lib/auth/principal.js';
import { useRuntimeConfig } from '../helpers/in-process.js';

/**
 * ACME enrollment and revocation (lib/certificates/acme.ts) against a directory that
 * accepts TCP connections and never answers: the operation ends at its deadline
 * (ACME_TIMEOUT_MS, set small here: the runtime's configuration is one for every test file,
 * so the fetch path is called in-process) with a 502 `acme_failed` saying the ACME server
 * did not answer, and every connection it opened is closed.
 */
let acme: typeof import('../../lib/certificates/acme.js');
let HttpError: typeof import('../../lib/core/errors.js').HttpError;
let server: Server;
let port = 0;
const sockets = new Set<Socket>();
let accepted = 0;

beforeAll(async () => {
  useRuntimeConfig();
  process.env.ACME_TIMEOUT_MS = '1500';
  process.env.ACME_ALLOW_LOOPBACK = '1';
  acme = await import('../../lib/certificates/acme.js');
  ({ HttpError } = await import('../../lib/core/errors.js'));
  server = createServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    // read (and ignore) what arrives, so the client's close is seen
    socket.resume();
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  port = (server.address() as { port: number }).port;
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((ok) => server?.close(ok));
});

const ctx = (): CallContext => {
  const tenantId = randomUUID();
  const tenant = { id: tenantId, name: 't', admin_email: 'a@example.test', status: 'active', operator: false, quota: {}, created_at: '', updated_at: '' } as const;
  return { principal: { kind: 'api_key', tenantId, tenant, id: 'k', user: 'a@example.test', scopes: ['admin:*'], operator: false }, requestId: 'r', sourceIp: null, userAgent: null };
};

async function failure(run: () => Promise<unknown>): Promise<InstanceType<typeof HttpError>> {
  try {
    await run();
  } catch (error) {
    return error as InstanceType<typeof HttpError>;
  }
  throw new Error('the operation completed against a directory that never answers');
}

/** Waits until the listener holds no open connection from the service (bounded). */
async function drained(): Promise<number> {
  for (let i = 0; i < 50 && sockets.size > 0; i++) await new Promise((r) => setTimeout(r, 20));
  return sockets.size;
}

describe('an ACME directory that accepts and never answers', () => {
  it('enrollment: 502 acme_failed saying the server did not answer, its connections closed', async () => {
    const settings = { directory_url: `https://127.0.0.1:${port}/directory` };
    const before = accepted;
    const error = await failure(() => acme.obtainCertificate(ctx(), settings, '-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n'));
    expect(error).toBeInstanceOf(HttpError);
    expect([error.status, error.code]).toEqual([502, 'acme_failed']);
    expect(error.message).toBe(`the ACME server 127.0.0.1:${port} did not answer within 1500 ms: the CA is unreachable or too slow, try again later`);
    expect(accepted).toBeGreaterThan(before);
    expect(await drained()).toBe(0);
  });

  it('revocation: the same deadline and answer', async () => {
    const settings = { directory_url: `https://127.0.0.1:${port}/directory` };
    const error = await failure(() => acme.revokeAtDirectory(ctx(), settings, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n', 0));
    expect([error.status, error.code]).toEqual([502, 'acme_failed']);
    expect(error.message).toContain('did not answer within 1500 ms');
    expect(await drained()).toBe(0);
  });
});

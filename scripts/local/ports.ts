import { createServer } from 'node:net';

/** A TCP port free on the loopback address right now (the OS picks it), for a local server to take. */
export function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => ok(port));
    });
    s.on('error', fail);
  });
}

/** Whether `port` can be taken on `host` right now (EADDRINUSE: another process holds it). */
export function portFree(port: number, host: string): Promise<boolean> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' || error.code === 'EACCES' ? ok(false) : fail(error)));
    s.listen({ port, host, exclusive: true }, () => s.close(() => ok(true)));
  });
}

/**
 * The one line that answers a port the local runtime needs and cannot take, naming the
 * variable that moves it; undefined when every port is free. DynamoDB Local listens on every
 * interface (scripts/local/dynamodb.ts), so its port is tried there.
 */
export async function portProblem(ports: readonly { port: number; variable: string; host: string }[]): Promise<string | undefined> {
  for (const p of ports) {
    if (!(await portFree(p.port, p.host))) {
      return `port ${p.port} is in use (${p.variable}): set ${p.variable} to a free port, e.g. ${p.variable}=${p.port + 1} npm start`;
    }
  }
  return undefined;
}

import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * The first port of the range the kernel gives outgoing connections (Linux:
 * /proc/sys/net/ipv4/ip_local_port_range; 32768 elsewhere).
 */
export function ephemeralLow(file = '/proc/sys/net/ipv4/ip_local_port_range'): number {
  try {
    const low = Number(readFileSync(file, 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 1024 ? low : 32768;
  } catch {
    return 32768;
  }
}

/**
 * A TCP port free on the loopback address right now, for a local server to take, chosen
 * below the kernel's ephemeral range. A port the OS picks (listen on 0) comes from that range,
 * which every outgoing connection draws from too: the artifact runtime takes its port minutes
 * after the suite chose it, and in between the suite's own thousands of connections to
 * DynamoDB Local could take it (seen on a busy machine: "listen EADDRINUSE" and a run that
 * did not start). A port below the range is taken only by a process that asks for it.
 */
export async function freePort(random: () => number = Math.random): Promise<number> {
  const high = Math.min(ephemeralLow(), 65536);
  const low = Math.max(1025, Math.min(10_000, high - 1000));
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = low + Math.floor(random() * (high - low));
    if (await portFree(port, '127.0.0.1')) return port;
  }
  return anyFreePort();
}

/** A free port the OS picks (from its ephemeral range). */
function anyFreePort(): Promise<number> {
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

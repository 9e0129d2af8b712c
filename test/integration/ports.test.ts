import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ephemeralLow, freePort, portFree } from '../../scripts/local/ports.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});
const hold = (port: number) =>
  new Promise<void>((ok, fail) => {
    const s = createServer();
    servers.push(s);
    s.once('error', fail);
    s.listen(port, '127.0.0.1', () => ok());
  });

describe('scripts/local/ports.ts: the ports the local runtimes and the suite take', () => {
  it('reads the first port of the kernel ephemeral range, and falls back to 32768', () => {
    const dir = mkdtempSync(join(tmpdir(), 'secrets-api-ports-'));
    try {
      writeFileSync(join(dir, 'range'), '40000\t60999\n');
      expect(ephemeralLow(join(dir, 'range'))).toBe(40000);
      writeFileSync(join(dir, 'range'), 'garbage\n');
      expect(ephemeralLow(join(dir, 'range'))).toBe(32768);
      expect(ephemeralLow(join(dir, 'missing'))).toBe(32768);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('picks a free port below the ephemeral range, where no outgoing connection can take it before the server does', async () => {
    const low = ephemeralLow();
    for (let i = 0; i < 20; i++) {
      const port = await freePort();
      expect(port).toBeGreaterThan(1024);
      expect(port).toBeLessThan(low);
      expect(await portFree(port, '127.0.0.1')).toBe(true);
    }
  });

  it('passes over a port another process holds', async () => {
    const held = await freePort();
    await hold(held);
    expect(await portFree(held, '127.0.0.1')).toBe(false);
    // the first draw lands on the held port, the second elsewhere
    const high = Math.min(ephemeralLow(), 65536);
    const low = Math.max(1025, Math.min(10_000, high - 1000));
    const draws = [(held - low + 0.5) / (high - low), 0.5];
    const port = await freePort(() => draws.shift() ?? Math.random());
    expect(port).not.toBe(held);
    expect(await portFree(port, '127.0.0.1')).toBe(true);
  });
});

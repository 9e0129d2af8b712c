import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDynamoLocal, stopDynamoLocal, waitForDynamo } from '../../scripts/local/dynamodb.js';
import { freePort } from '../../scripts/local/ports.js';
import { scaled } from '../helpers/timeouts.js';

/**
 * DynamoDB Local (scripts/local/dynamodb.ts) is reachable from this machine only: its jar
 * listens on every interface, the launcher binds it to 127.0.0.1. Every other address of
 * this machine is refused, and it stops with its stop (no Java process left).
 */
const reach = (host: string, port: number) =>
  new Promise<'connected' | string>((ok) => {
    const socket = connect({ host, port, timeout: 5000 });
    socket.once('connect', () => {
      socket.destroy();
      ok('connected');
    });
    socket.once('timeout', () => {
      socket.destroy();
      ok('timeout');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => ok(error.code ?? String(error)));
  });

describe('DynamoDB Local of the local runtime', () => {
  let port: number;
  let dynamo: ReturnType<typeof startDynamoLocal>;
  beforeAll(async () => {
    port = await freePort();
    dynamo = startDynamoLocal({ port });
    await waitForDynamo(`http://127.0.0.1:${port}`, 120_000, dynamo);
  }, scaled(180_000));
  afterAll(async () => {
    await stopDynamoLocal(dynamo);
  });

  it('answers on 127.0.0.1 and refuses every other address of this machine', async () => {
    expect(await reach('127.0.0.1', port)).toBe('connected');
    const others = Object.values(networkInterfaces())
      .flat()
      .filter((a) => a && !a.internal && !a.address.startsWith('fe80:'))
      .map((a) => a!.address);
    expect(others.length, 'this machine has an address other than loopback to try').toBeGreaterThan(0);
    for (const address of others) expect(`${address}: ${await reach(address, port)}`).toBe(`${address}: ECONNREFUSED`);
  });

  it('is gone once stopped', async () => {
    const pid = dynamo.pid!;
    await stopDynamoLocal(dynamo);
    expect(() => process.kill(pid, 0)).toThrow();
  });
});

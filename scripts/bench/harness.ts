import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { request, Agent } from 'node:http';
import type { TestServer } from '../../test/helpers/databases.js';
import { freePort } from '../local/ports.js';

/** Closed-loop load: `concurrency` workers run `op` back to back for `seconds`. */
export async function closedLoop(name: string, op: (worker: number) => Promise<void>, opts: { concurrency: number; seconds: number; warmupSeconds?: number }) {
  const run = async (seconds: number, record: boolean) => {
    const latencies: number[] = [];
    let errors = 0;
    const deadline = performance.now() + seconds * 1000;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: opts.concurrency }, async (_, w) => {
        while (performance.now() < deadline) {
          const t0 = performance.now();
          try {
            await op(w);
            if (record) latencies.push(performance.now() - t0);
          } catch (error) {
            errors++;
            if (errors === 1) process.stderr.write(`${name}: ${(error as Error).message}\n`);
          }
        }
      }),
    );
    return { latencies, errors, elapsed: (performance.now() - started) / 1000 };
  };
  if (opts.warmupSeconds) await run(opts.warmupSeconds, false);
  const { latencies, errors, elapsed } = await run(opts.seconds, true);
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? NaN;
  return { name, ops: latencies.length, errors, throughput: latencies.length / elapsed, p50: pct(50), p99: pct(99) };
}

export type Result = Awaited<ReturnType<typeof closedLoop>>;

export const fmt = (r: Result) =>
  `${r.name.padEnd(34)} ${r.throughput.toFixed(0).padStart(7)} ops/s   p50 ${r.p50.toFixed(2).padStart(7)} ms   p99 ${r.p99.toFixed(2).padStart(7)} ms   errors ${r.errors}`;

/** Starts the real local runtime (`scripts/local/start.ts`) on free ports, in memory. */
export async function startRuntime(
  rootKey: string,
  opts: { dynamoPort?: number; env?: Record<string, string> } = {},
): Promise<{ baseUrl: string; dynamoEndpoint: string; dataDir: string; pid: number; logFile: string; stop: () => void }> {
  const [port, dynamoPort] = [await freePort(), opts.dynamoPort ?? (await freePort())];
  const dataDir = mkdtempSync(join(tmpdir(), 'secrets-bench-'));
  // The runtime's structured logs go to a file, as Lambda's go to its log service: a pipe
  // read by this (busy) load generator would block the runtime's writes on the generator's
  // event loop, a cost no deployment has.
  const logFile = join(dataDir, 'runtime.log');
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', resolve('scripts/local/start.ts')], {
    env: { ...process.env, PORT: String(port), DYNAMODB_PORT: String(dynamoPort), DYNAMODB_IN_MEMORY: '1', DATA_DIR: dataDir, SECRETS_DEV_ROOT_KEY: rootKey, NODE_NO_WARNINGS: '1', ...opts.env },
    stdio: ['ignore', process.env.BENCH_LOG_SINK === 'pipe' ? 'pipe' : openSync(logFile, 'a'), 'inherit'],
  });
  if (child.stdout) child.stdout.resume();
  let exited: number | null | undefined;
  child.on('exit', (code) => {
    exited = code;
  });
  for (;;) {
    if (exited !== undefined) throw new Error(`runtime exited ${exited} (its log: ${logFile})`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health`)).ok) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { baseUrl: `http://127.0.0.1:${port}`, dynamoEndpoint: `http://127.0.0.1:${dynamoPort}`, dataDir, pid: child.pid!, logFile, stop: () => child.kill('SIGTERM') };
}

const agent = new Agent({ keepAlive: true, maxSockets: 256 });

/** One HTTP request over a keep-alive agent; resolves status, headers and body text. */
export function http(method: string, url: string, headers: Record<string, string>, body?: string) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }>((ok, fail) => {
    const req = request(url, { method, headers: body ? { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } : headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => ok({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString() }));
    });
    req.on('error', fail);
    req.end(body);
  });
}

type JsonCall = (method: string, path: string, key: string, body?: unknown) => Promise<{ json: () => { data: any } }>;

/**
 * A PostgreSQL integration and a database role over it, the setup every lease benchmark
 * issues from; `label` names both. Returns the role's service-config id.
 */
export async function databaseRole(j: JsonCall, admin: string, pg: TestServer, label: string): Promise<string> {
  const conn = (
    await j('POST', '/api/v1/integrations', admin, {
      name: `${label}-db`,
      provider: pg.engine,
      host: pg.host,
      port: pg.port,
      database: pg.database,
      username: pg.admin,
      password: pg.adminPassword,
      tls_mode: 'disable',
    })
  ).json().data.integration.id as string;
  return (
    await j('POST', '/api/v1/service-config', admin, {
      name: `${pg.rolePrefix}${label}`,
      kind: 'database-role',
      connection_id: conn,
      default_ttl_seconds: 600,
      max_ttl_seconds: 3600,
      creation_statements: [`CREATE ROLE "{{name}}" WITH LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}'`],
    })
  ).json().data.service_config.id as string;
}

/**
 * Benchmark: DynamoDB calls and their sequential depth (round trips one after another) per
 * hot route, counted by a proxy in front of DynamoDB Local that the runtime's handlers talk
 * to (DYNAMODB_CLIENT_ENDPOINT), then the API/floor throughput ratio of `npm run bench`
 * (scripts/bench/secrets.ts) in the same run. README "Benchmarks" shows the table.
 *
 * Each route is called TRIPS_REQUESTS times one request at a time after a warm-up, with a
 * quiet gap before each (the stream relay's work after a write lands in the gap). The calls
 * a request made are the ones the proxy saw between its start and its answer, less the
 * background's own (the relay's and sweeper's listing queries, the streams API, SYS items).
 * Depth: the longest chain of calls each of which started after the one before had
 * answered; calls that overlap in time count once.
 *
 *   npm run bench:trips      (TRIPS_REQUESTS=5; BENCH_SECONDS / BENCH_CONCURRENCY as npm run bench; TRIPS_ONLY=1 skips the throughput part)
 */
import { randomBytes } from 'node:crypto';
import { generateApiKey } from '../../lib/auth/api-keys.js';
import { generateDeviceKey, signedFetch } from '../agent-client.js';
import { postgresServer, type TestServer } from '../../test/helpers/databases.js';
import { freePort } from '../local/ports.js';
import { databaseRole, http, startRuntime } from './harness.js';
import { type Call, countingProxy, depthOf } from './proxy.js';
import { printSecretsBench, secretsBench } from './secrets.js';

const REQUESTS = Number(process.env.TRIPS_REQUESTS ?? 5);
const QUIET_MS = 2000; // the stream relay (1 s batching window) and the sealer finish in the gap

interface Row {
  readonly route: string;
  readonly kind: 'read' | 'write';
  readonly calls: number;
  readonly depth: number;
  readonly chain: string;
}

async function measure(
  proxy: Awaited<ReturnType<typeof countingProxy>>,
  route: string,
  kind: Row['kind'],
  send: () => Promise<{ status: number; text: string }>,
  expected: number,
) {
  const samples: { calls: Call[]; depth: number }[] = [];
  for (let i = 0; i < REQUESTS + 2; i++) {
    await new Promise((r) => setTimeout(r, QUIET_MS));
    const t0 = performance.now();
    const res = await send();
    const t1 = performance.now();
    if (res.status !== expected) throw new Error(`${route}: ${res.status} ${res.text.slice(0, 300)}`);
    if (i < 2) continue; // warm-up: the container's first request per account reads the account's limit first
    const mine = proxy.calls.filter((c) => !c.background && c.start >= t0 && c.start <= t1);
    samples.push({ calls: mine, depth: depthOf(mine) });
  }
  if (process.env.TRIPS_VERBOSE === '1') for (const x of samples) process.stderr.write(`${route}: ${x.depth} ${chainOf(x.calls)}\n`);
  samples.sort((a, b) => a.depth - b.depth || a.calls.length - b.calls.length);
  const median = samples[Math.floor(samples.length / 2)]!;
  return { route, kind, calls: median.calls.length, depth: median.depth, chain: chainOf(median.calls) } satisfies Row;
}

/** A request's calls in order, those that overlapped in time joined with ∥. */
function chainOf(calls: readonly Call[]): string {
  const steps: Call[][] = [];
  for (const c of [...calls].sort((a, b) => a.start - b.start)) {
    const last = steps.at(-1);
    if (last?.some((x) => x.end > c.start)) last.push(c);
    else steps.push([c]);
  }
  return steps.map((s) => s.map((c) => `${c.op} ${c.what}`.trim()).join(' ∥ ')).join(' → ');
}

async function trips(): Promise<Row[]> {
  const dynamoPort = await freePort();
  const proxy = await countingProxy(dynamoPort);
  const rootKey = generateApiKey().key;
  const rt = await startRuntime(rootKey, { dynamoPort, env: { DYNAMODB_CLIENT_ENDPOINT: `http://127.0.0.1:${proxy.port}` } });
  let pgServer: TestServer | undefined;
  try {
    const j = async (method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}) => {
      const r = await http(
        method,
        `${rt.baseUrl}${path}`,
        { authorization: `Bearer ${key}`, ...headers },
        body === undefined ? undefined : JSON.stringify(body),
      );
      return { ...r, json: () => JSON.parse(r.text) as { data: any } };
    };
    const quota = { requests_per_minute: 100_000_000 };
    const made = (await j('POST', '/api/v1/admin/tenants', rootKey, { name: 'trips', admin_email: 'trips@example.test', quota })).json().data;
    const admin: string = made.api_key.key;

    const secret = await j('POST', '/api/v1/secrets', admin, { name: 'trips', data: { value: randomBytes(12).toString('hex') } });
    let etag = secret.headers.etag as string;
    const password = (await j('POST', '/api/v1/passwords', admin, { name: 'trips', username: 'u', password: randomBytes(12).toString('hex') })).json()
      .data.password.id as string;
    const signing = await j('POST', '/api/v1/code-signing-keys', admin, { name: 'trips-hsm', backend: 'pkcs11', algorithm: 'EC_P256' });
    const signingId = signing.status === 201 ? (signing.json().data.code_signing_key.id as string) : undefined;

    const rows: Row[] = [];
    rows.push(await measure(proxy, 'GET /api/v1/secrets/{name}', 'read', () => j('GET', '/api/v1/secrets/trips', admin), 200));
    rows.push(
      await measure(
        proxy,
        'PUT /api/v1/secrets/{name} (If-Match)',
        'write',
        async () => {
          const r = await j('PUT', '/api/v1/secrets/trips', admin, { data: { value: randomBytes(12).toString('hex') } }, { 'if-match': etag });
          etag = r.headers.etag as string;
          return r;
        },
        200,
      ),
    );
    rows.push(await measure(proxy, 'GET /api/v1/passwords/{id}', 'read', () => j('GET', `/api/v1/passwords/${password}`, admin), 200));
    if (signingId) {
      const message = randomBytes(64).toString('base64');
      rows.push(
        await measure(
          proxy,
          'POST /api/v1/crypto/sign',
          'write',
          () => j('POST', '/api/v1/crypto/sign', admin, { backend: 'pkcs11', key_id: signingId, message, purpose: 'bench' }),
          200,
        ),
      );
    } else process.stderr.write(`signing key not created (${signing.status} ${signing.text.slice(0, 200)}): sign skipped\n`);

    // a database lease (PostgreSQL on 127.0.0.1:5432, user postgres, trust)
    try {
      pgServer = await postgresServer(randomBytes(12).toString('hex'));
      const role = await databaseRole(j, admin, pgServer, 'trips');
      rows.push(
        await measure(
          proxy,
          'POST /api/v1/database/roles/{id}/credentials',
          'write',
          () => j('POST', `/api/v1/database/roles/${role}/credentials`, admin, { ttl_seconds: 600 }),
          201,
        ),
      );
    } catch (error) {
      process.stderr.write(`database lease skipped: ${(error as Error).message}\n`);
    }

    // agent access: a device of a profile granted the secret
    const profile = crypto.randomUUID();
    const secretId = secret.json().data.secret.id as string;
    await j('PUT', `/api/v1/agents/profiles/${profile}`, admin, {
      name: 'trips',
      enabled: true,
      grants: [{ alias: 'db', service: 'secret.read', resource: secretId }],
    });
    const key = generateDeviceKey('ed25519');
    const device = (await j('POST', '/api/v1/agents/devices', admin, { name: 'trips-dev', public_key: key.publicJwk, profile_id: profile })).json()
      .data.device.id as string;
    rows.push(
      await measure(
        proxy,
        'POST /api/v1/agent/access/{alias}',
        'write', // the nonce claim and the audit entry: a conditional write
        async () => {
          const r = await signedFetch(rt.baseUrl, { id: device, key }, 'POST', '/api/v1/agent/access/db');
          return { status: r.status, text: JSON.stringify(r.body) };
        },
        200,
      ),
    );
    return rows;
  } finally {
    await pgServer?.cleanup();
    rt.stop();
    proxy.close();
  }
}

async function main() {
  const rows = await trips();
  process.stdout.write(`\nDynamoDB round trips per request (median of ${REQUESTS}, after a warm-up), ${new Date().toISOString()}\n`);
  process.stdout.write(`${'route'.padEnd(48)} ${'calls'.padStart(5)} ${'depth'.padStart(5)}  target\n`);
  for (const r of rows) {
    process.stdout.write(
      `${r.route.padEnd(48)} ${String(r.calls).padStart(5)} ${String(r.depth).padStart(5)}  ${r.kind === 'read' ? '<= 2' : '<= 3'}\n`,
    );
    process.stdout.write(`    ${r.chain}\n`);
  }
  if (process.env.TRIPS_ONLY === '1') return;
  printSecretsBench(await secretsBench());
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error).stack ?? error)}\n`);
  process.exit(1);
});

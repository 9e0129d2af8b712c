/**
 * `npm run bench:cost`: what one request of each hot route costs in AWS, from units measured
 * in the local runtime (not assumed), priced at list prices; then the fixed monthly cost of
 * each documented variant from its synthesized templates. A benchmark, not a test: it prints
 * figures and asserts nothing. docs/cost.md explains each column and shows the runs.
 *
 * The runtime (scripts/local/start.ts, every route and the audit writer in one process) is
 * started with scripts/bench/cost-probe.mjs preloaded (NODE_OPTIONS), which counts every AWS
 * SDK call at the client: DynamoDB capacity from ReturnConsumedCapacity TOTAL, SQS requests,
 * and the KMS operations the local keyring stands in for. Per route, COST_REQUESTS requests
 * (default 40) one after another after a warm-up, then a drain (the audit writer's put and the
 * stream relay land in it); everything the process did in that window (log bytes less what it
 * does idle, measured first), divided by the requests:
 * - DynamoDB read and write request units (on-demand: RRU = RCU, WRU = WCU);
 * - SQS requests: SendMessage, and the writer mapping's ReceiveMessage (those that brought
 *   messages) and DeleteMessageBatch — Lambda's event-source mapping bills them to the account;
 * - KMS requests;
 * - log bytes: what the process wrote to its log (the structured request line, the EMF metrics
 *   line — metrics on, as in Lambda — and the writer's lines) — Lambda's platform lines are off (systemLogLevel WARN, JSON format);
 * - CPU ms: the process's CPU within each request's own window, from its arrival at the
 *   gateway to its response's end (the probe; with several in flight, whose windows overlap,
 *   the process's CPU over the run, /proc/<pid>/stat, less its idle rate of the 3 s before),
 *   next to GET /health in the same run; the function's own CPU is taken as route − /health
 *   (the local gateway's share of a request);
 * - billed duration: that CPU stretched to a 512 MB function's share of a vCPU (CPU_STRETCH)
 *   plus the AWS calls the request waited for, the longest chain of calls one after another,
 *   each at the in-region latency LATENCY_MS assumes;
 * - writer invocations: one per batch the writer's mapping received.
 *
 * Then GET of a secret once more as one busy container (COST_BUSY_LANES in flight, after a
 * warm-up at that rate), paced to COST_BUSY_RATE requests a second of the runtime's clock
 * when the machine answers fewer (the probe's paced clock), and printed as ratios to the
 * quiet run of the same route in the same runtime: the limiter leases up to LEASE_MAX tokens
 * to a container that admitted requests of the account in the last LEASE_WINDOW seconds,
 * quiet or busy (docs/capacity.md, "Leased tokens").
 *
 *   npm run bench:cost      (COST_REQUESTS=40, COST_COLD_RATE=0.01, COST_SKIP_FIXED=1 skips the synthesis,
 *                            COST_ROUTES=<regex> measures only those routes, COST_BUSY_LANES=0 skips the busy run,
 *                            COST_BUSY_RATE=0 leaves the clock real, COST_XRAY_SAMPLED=0.05 prices another sampling rule,
 *                            COST_QUIET_RATE=0 runs the quiet routes as fast as answered, not at most 5 a second)
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { generateApiKey } from '../../lib/auth/api-keys.js';
import { LEASE_MAX, LEASE_WINDOW } from '../../lib/ratelimit/bucket.js';
import { postgresServer, type TestServer } from '../../test/helpers/databases.js';
import { generateDeviceKey, signedFetch } from '../agent-client.js';
import { XRAY_DEFAULTS } from '../../infra/settings.js';
import { fixedCosts, printFixed } from './cost-fixed.js';
import { databaseRole, http, startRuntime } from './harness.js';

const REQUESTS = Number(process.env.COST_REQUESTS ?? 40);
/**
 * Requests in flight at once for the read routes (default 1: one after another; writes stay one at a time: If-Match). The local runtime is one
 * process, so more lanes are one busy container as the rate limiter sees it (docs/capacity.md,
 * "Leased tokens"; with several in flight, the requests that arrive while a lease's write is
 * in flight each write too). The achieved rate is printed.
 */
const CONCURRENCY = Math.max(1, Number(process.env.COST_CONCURRENCY ?? 1));
/** Routes measured (a regular expression on the route's name; default all). GET /health is always measured. */
const ONLY = process.env.COST_ROUTES ? new RegExp(process.env.COST_ROUTES) : undefined;
/**
 * Requests in flight at once for GET of a secret as a busy container (0: not measured).
 * Default 1: a Lambda container serves one request at a time, and more in flight in one
 * process would overstate the writes (requests that arrive while the write taking a lease is
 * in flight each write too). The limiter's state is per process, and the local runtime is one
 * process: it is the container. Measured after the quiet run of the same route in the same
 * runtime, and reported as ratios to it.
 */
const BUSY_LANES = Math.max(0, Number(process.env.COST_BUSY_LANES ?? 1));
/** The busy run's requests, after BUSY_WARMUP_MS (paced: 2 × COST_BUSY_RATE requests) at the same rate (the lease is sized by the previous second's admissions). */
const BUSY_REQUESTS = Number(process.env.COST_BUSY_REQUESTS ?? 100);
const BUSY_WARMUP_MS = 3000;
/**
 * The rate (requests a second, as the process's clock counts them) the busy run is paced to
 * when the machine answers fewer (0: the real clock only). The probe's paced clock
 * (scripts/bench/cost-probe.mjs) slows the runtime's `Date.now` by F = this rate / the rate
 * answered, re-read every half second. 25 a second is a container answering in 40 ms, about
 * the billed duration of a GET measured here: what one saturated Lambda container serves.
 */
const BUSY_RATE = Math.max(0, Number(process.env.COST_BUSY_RATE ?? 25));
const BUSY_ROUTE = 'GET /api/v1/secrets/{name}, busy container';
/**
 * The quiet runs (one at a time) start at most this many requests a second (0: as fast as
 * answered): a quiet account, under 10 requests a second per container. Until 2026-11-28 the
 * limiter leased only from 10 a second, and a machine that answers 25+ a second one at a
 * time leased in some seconds of the "quiet" run and not others (GET of a secret measured
 * 0.47 to 1.00 WRU from run to run, 2026-11-27 21:45–21:55 UTC); it now leases at any rate
 * (k = 10 from 2.5 a second), and the quiet run measures it at a quiet account's pace. Each
 * route's run starts after more than LEASE_WINDOW idle seconds, so it includes the lease's
 * slow start (k = 1, 2, 6, 10: about 6 writes in the first 40 requests).
 */
const QUIET_RATE = Math.max(0, Number(process.env.COST_QUIET_RATE ?? 5));
const WARMUP = 3;
const DRAIN_MS = 3000;
const IDLE_MS = 6000;
const QUIET_MS = 3000;
/** The share of invocations that are cold starts (billed INIT since 1 August 2025). */
const COLD_RATE = Number(process.env.COST_COLD_RATE ?? 0.01);
/**
 * Billed INIT per cold start: `npm run bench:cold` measured a handler module's init at
 * 115 ms median (README, 2026-11-24) on this machine; a 512 MB arm64 sandbox is slower and
 * the runtime's own start adds to it: 250 ms assumed.
 */
const INIT_MS = 250;
/** Memory of every function (infra/settings.ts memoryMb default). */
const MEMORY_GB = 512 / 1024;
/**
 * Lambda gives a function CPU in proportion to its memory: one vCPU at 1,769 MB. A
 * millisecond of CPU measured on a whole core of this machine is taken as 1769/512 ms of
 * billed duration at 512 MB.
 */
const CPU_STRETCH = 1769 / 512;
/** In-region latency of one call, as the request waits for it (assumed; the local engines answer in about 1 ms). */
const LATENCY_MS: Record<string, number> = { DynamoDB: 5, SQS: 8, KMS: 8 };

/** us-east-1 list prices (USD), as read on the date below. */
export const PRICES = {
  date: '2026-11-27',
  apiGatewayRestPerMillion: 3.5,
  lambdaRequestPerMillion: 0.2,
  /** arm64 (infra/route-function.ts ARCHITECTURE); x86_64 is 0.0000166667. */
  lambdaGbSecond: 0.0000133334,
  dynamoWruPerMillion: 0.625,
  dynamoRruPerMillion: 0.125,
  sqsPerMillion: 0.4,
  kmsPer10k: 0.03,
  logsIngestPerGb: 0.5,
  /** Per trace recorded. */
  xrayPerMillionTraces: 5,
  /**
   * The share recorded at a high request rate: the stage's own sampling rule (infra/api-stack.ts,
   * context xraySampleRate, default 1 % beyond 1 request/s); COST_XRAY_SAMPLED prices another
   * (0.05: X-Ray's default rule, which applied before the stage had its own).
   */
  xraySampled: Number(process.env.COST_XRAY_SAMPLED ?? XRAY_DEFAULTS.sampleRate),
  secretsManagerPer10kCalls: 0.05,
  secretsManagerPerSecretMonth: 0.4,
} as const;

interface ProbeRecord {
  readonly service: string;
  readonly op: string;
  readonly start: number;
  readonly end: number;
  readonly kind?: 'read' | 'write';
  readonly units?: number;
  readonly messages?: number;
  readonly refused?: boolean;
  readonly error?: string;
  /** Service `HTTP`: the runtime process's CPU while it served one request (µs). */
  readonly cpuUs?: number;
}

interface Totals {
  rru: number;
  wru: number;
  sqs: number;
  kms: number;
  writerInvocations: number;
  logBytes: number;
  cpuMs: number;
  ddbCalls: number;
}

export interface RouteCost {
  readonly route: string;
  readonly per: Totals;
  /** The longest chain of AWS calls a request waited for, at LATENCY_MS (median). */
  readonly waitMs: number;
  readonly ops: string;
  /** Requests a second answered while measuring, and how many were in flight at once. */
  readonly rate: number;
  readonly lanes: number;
  /** The rate as the runtime's (paced) clock counted it: the rate its limiter saw. */
  readonly processRate: number;
}

const cpuMsOf = (pid: number) => {
  // utime and stime, fields 14 and 15 of /proc/<pid>/stat, in clock ticks (100 per second)
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function readProbe(file: string): ProbeRecord[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as ProbeRecord);
}

function totalsOf(records: readonly ProbeRecord[]): Omit<Totals, 'logBytes' | 'cpuMs'> {
  const t = { rru: 0, wru: 0, sqs: 0, kms: 0, writerInvocations: 0, ddbCalls: 0 };
  for (const r of records) {
    if (r.service === 'DynamoDB' && r.kind) {
      t.ddbCalls++;
      if (r.kind === 'read') t.rru += r.units ?? 0;
      else t.wru += r.units ?? 0;
    } else if (r.service === 'SQS') {
      if (r.op === 'ReceiveMessage') {
        if ((r.messages ?? 0) === 0) continue; // idle long polling: fixed, not per request
        t.writerInvocations++;
      }
      if (r.op === 'GetQueueAttributes' || r.op === 'CreateQueue') continue;
      t.sqs++;
    } else if (r.service === 'KMS') t.kms++;
  }
  return t;
}

/** The longest chain of calls each started after the one before answered, weighted by LATENCY_MS. */
function waitOf(records: readonly ProbeRecord[]): number {
  const sorted = [...records].sort((a, b) => a.start - b.start);
  const best: number[] = [];
  for (let i = 0; i < sorted.length; i++) {
    let before = 0;
    for (let j = 0; j < i; j++) if (sorted[j]!.end <= sorted[i]!.start) before = Math.max(before, best[j]!);
    best.push(before + (LATENCY_MS[sorted[i]!.service] ?? 5));
  }
  return Math.max(0, ...best);
}

const opsOf = (records: readonly ProbeRecord[], n: number) => {
  const counts = new Map<string, number>();
  for (const r of records) {
    if (r.service === 'SQS' && r.op === 'ReceiveMessage' && (r.messages ?? 0) === 0) continue;
    // the stream's reads (free to a Lambda event-source mapping) and control-plane calls are not billed per request
    if ((r.service === 'DynamoDB' && !r.kind) || r.service === 'DynamoDB Streams' || r.op === 'GetQueueAttributes') continue;
    const what = `${r.service === 'DynamoDB' ? '' : `${r.service} `}${r.op}${r.refused ? ' (refused)' : ''}`;
    counts.set(what, (counts.get(what) ?? 0) + 1);
  }
  return [...counts]
    .filter(([, c]) => c / n >= 0.05)
    .map(([op, c]) => `${op} ${(c / n).toFixed(c % n === 0 ? 0 : 2)}`)
    .join(', ');
};

export async function measureCosts(): Promise<{ routes: RouteCost[]; health: RouteCost }> {
  const rootKey = generateApiKey().key;
  // in a directory of its own: the runtime flushes the probe once more as it exits
  const probeDir = mkdtempSync(join(tmpdir(), 'secrets-cost-'));
  const probeFile = join(probeDir, 'probe.jsonl');
  writeFileSync(probeFile, '');
  const clockFile = join(probeDir, 'clock');
  writeFileSync(clockFile, '1');
  const probe = resolve('scripts/bench/cost-probe.mjs');
  const rt = await startRuntime(rootKey, {
    env: {
      // metrics are on in Lambda (Powertools' default) and off locally: their EMF lines are log bytes AWS ingests
      POWERTOOLS_METRICS_DISABLED: 'false',
      COST_PROBE_FILE: probeFile,
      COST_CLOCK_FILE: clockFile,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${probe}`.trim() },
  });
  let pgServer: TestServer | undefined;
  const logSize = () => statSync(rt.logFile).size;
  try {
    const j = async (method: string, path: string, key: string | undefined, body?: unknown, headers: Record<string, string> = {}) => {
      const r = await http(method, `${rt.baseUrl}${path}`, { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers }, body === undefined ? undefined : JSON.stringify(body));
      return { ...r, json: () => JSON.parse(r.text) as { data: any } };
    };
    const quota = { requests_per_minute: 100_000_000 };
    const made = (await j('POST', '/api/v1/admin/tenants', rootKey, { name: 'cost', admin_email: 'cost@example.test', quota })).json().data;
    const admin: string = made.api_key.key;

    // what the process does idle (the sweeper, the relay's and the writer's polling), per ms
    await sleep(4000);
    const idle0 = { cpu: cpuMsOf(rt.pid), log: logSize(), t: Date.now() };
    await sleep(IDLE_MS);
    const idle1 = { cpu: cpuMsOf(rt.pid), log: logSize(), t: Date.now() };
    const idleSpan = idle1.t - idle0.t;
    const idleRate = { cpuMs: (idle1.cpu - idle0.cpu) / idleSpan, logBytes: (idle1.log - idle0.log) / idleSpan };

    const measure = async (
      route: string,
      send: () => Promise<{ status: number; text: string }>,
      expected: number,
      n = REQUESTS,
      lanes = 1,
      warmupMs = 0,
      pacedRate = 0,
      quiet = true,
    ): Promise<RouteCost> => {
      for (let i = 0; i < WARMUP; i++) {
        const r = await send();
        if (r.status !== expected) throw new Error(`${route}: ${r.status} ${r.text.slice(0, 300)}`);
      }
      await sleep(DRAIN_MS);
      // the idle process's CPU right before the requests (its polling varies with the machine's load)
      const q0 = { cpu: cpuMsOf(rt.pid), t: Date.now() };
      await sleep(QUIET_MS);
      const idleCpuRate = (cpuMsOf(rt.pid) - q0.cpu) / (Date.now() - q0.t);
      const warmUntil = warmupMs > 0 ? Date.now() + warmupMs : 0;
      let t0 = Date.now();
      let cpu0 = cpuMsOf(rt.pid);
      let log0 = logSize();
      const windows: [number, number][] = [];
      // the paced clock: F = pacedRate / the rate answered over the last 2 s, and the process's
      // seconds (real seconds / F) summed from the first measured request
      const answered: number[] = [];
      let factor = 1;
      let processMs = 0;
      let paceAt = Date.now();
      const pace = () => {
        const now = Date.now();
        if (now >= t0) processMs += (now - Math.max(paceAt, t0)) / factor;
        paceAt = now;
        const recent = answered.filter((t) => t > now - 2000).length / 2;
        const f = recent > 0 ? Math.max(1, pacedRate / recent) : factor;
        if (Math.abs(f - factor) / factor > 0.05) {
          factor = f;
          writeFileSync(clockFile, String(factor));
        }
      };
      const pacer = pacedRate > 0 ? setInterval(pace, 500) : undefined;
      let next = 0;
      // a quiet run (one at a time, not paced): at most QUIET_RATE requests a second
      const spacingMs = quiet && lanes === 1 && pacedRate === 0 && QUIET_RATE > 0 ? 1000 / QUIET_RATE : 0;
      let lastStart = 0;
      // a busy run warms up at its own rate and measures from the moment every lane's last
      // warm-up request has answered (so none of its work is counted): the limiter sizes its
      // lease by the previous second's admissions
      let warmLanes = warmUntil > 0 ? lanes : 0;
      let startMeasuring = () => {};
      const measuring = new Promise<void>((go) => {
        startMeasuring = go;
      });
      const lane = async () => {
        if (warmUntil > 0) {
          // paced: two seconds of the process's clock at the paced rate
          while (pacedRate > 0 ? answered.length < 2 * pacedRate : Date.now() < warmUntil) {
            const r = await send();
            answered.push(Date.now());
            if (r.status !== expected) throw new Error(`${route}: ${r.status} ${r.text.slice(0, 300)}`);
          }
          if (--warmLanes === 0) {
            t0 = Date.now();
            processMs = 0;
            paceAt = t0;
            cpu0 = cpuMsOf(rt.pid);
            log0 = logSize();
            startMeasuring();
          }
          await measuring;
        }
        while (next < n) {
          next++;
          if (spacingMs > 0 && next > 1) await sleep(Math.max(0, lastStart + spacingMs - Date.now()));
          lastStart = Date.now();
          const s = performance.timeOrigin + performance.now();
          const r = await send();
          answered.push(Date.now());
          windows.push([s, performance.timeOrigin + performance.now()]);
          if (r.status !== expected) throw new Error(`${route}: ${r.status} ${r.text.slice(0, 300)}`);
        }
      };
      await Promise.all(Array.from({ length: lanes }, lane));
      const rate = n / ((Date.now() - t0) / 1000);
      if (pacer) {
        pace();
        clearInterval(pacer);
        writeFileSync(clockFile, '1');
      }
      const processRate = pacer ? n / (processMs / 1000) : rate;
      // CPU over the requests alone: a drain's idle polling would outweigh them on a loaded machine
      const cpuSpent = cpuMsOf(rt.pid) - cpu0 - idleCpuRate * (Date.now() - t0);
      await sleep(DRAIN_MS);
      const t1 = Date.now();
      const span = t1 - t0;
      const probed = readProbe(probeFile).filter((r) => r.start >= t0 && r.start < t1);
      const records = probed.filter((r) => r.service !== 'HTTP');
      // one request in flight: the CPU of the requests' own windows (the probe); several in
      // flight overlap their windows, so then the process's CPU over the run less its idle rate
      const served = probed.filter((r) => r.service === 'HTTP');
      const inRequests = served.length === n ? served.reduce((sum, r) => sum + (r.cpuUs ?? 0), 0) / 1000 : undefined;
      const measured: Totals = { ...totalsOf(records), cpuMs: lanes === 1 && inRequests !== undefined ? inRequests : cpuSpent, logBytes: logSize() - log0 };
      // the calls are the requests' own (background work here is what the requests caused: the
      // writer's puts, the relay's deletes); CPU and log bytes less the idle process's
      const idleShare = (k: keyof Totals) => (k === 'logBytes' ? idleRate.logBytes * span : 0);
      const per = Object.fromEntries(
        Object.entries(measured).map(([k, v]) => [k, Math.max(0, (v - idleShare(k as keyof Totals)) / n)]),
      ) as unknown as Totals;
      if (process.env.COST_VERBOSE === '1') {
        const [s, e] = windows[Math.floor(n / 2)]!;
        for (const r of records.filter((x) => x.start >= s && x.start <= e + DRAIN_MS)) process.stderr.write(`${route}: ${JSON.stringify(r)}\n`);
        process.stderr.write(`${route}: idle rate ${JSON.stringify(idleRate)} span ${span}\n`);
      }
      const waits = windows.map(([s, e]) => waitOf(records.filter((r) => r.start >= s && r.start <= e))).sort((a, b) => a - b);
      return { route, per, rate, processRate, lanes, waitMs: waits[Math.floor(waits.length / 2)] ?? 0, ops: `${opsOf(records, n)} (${rate.toFixed(1)} requests/s, ${lanes} at a time${spacingMs > 0 ? `, at most ${QUIET_RATE} a second` : ''}${pacer ? `; ${processRate.toFixed(1)} a second of the runtime's paced clock` : ''})` };
    };

    // /health unpaced: its CPU is the local gateway's share of a request, not a quiet account's
    const health = await measure('GET /health', () => j('GET', '/health', undefined), 200, REQUESTS * 2, 1, 0, 0, false);
    const secret = await j('POST', '/api/v1/secrets', admin, { name: 'cost', data: { value: randomBytes(12).toString('hex') } });
    let etag = secret.headers.etag as string;
    const password = (await j('POST', '/api/v1/passwords', admin, { name: 'cost', username: 'u', password: randomBytes(12).toString('hex') })).json().data
      .password.id as string;
    const rows: RouteCost[] = [];
    const want = (route: string) => ONLY === undefined || ONLY.test(route);
    const getSecret = () => j('GET', '/api/v1/secrets/cost', admin);
    if (want('GET /api/v1/secrets/{name}')) {
      rows.push(await measure('GET /api/v1/secrets/{name}', getSecret, 200, REQUESTS, CONCURRENCY));
      // the same route as one busy container, right after: the quiet run above is its baseline
      if (BUSY_LANES > 0) rows.push(await measure(BUSY_ROUTE, getSecret, 200, BUSY_REQUESTS, BUSY_LANES, BUSY_WARMUP_MS, BUSY_RATE));
    }
    if (want('PUT /api/v1/secrets/{name}'))
      rows.push(
      await measure(
        'PUT /api/v1/secrets/{name}',
        async () => {
          const r = await j('PUT', '/api/v1/secrets/cost', admin, { data: { value: randomBytes(12).toString('hex') } }, { 'if-match': etag });
          etag = r.headers.etag as string;
          return r;
        },
        200,
      ),
    );
    if (want('GET /api/v1/passwords/{id}')) rows.push(await measure('GET /api/v1/passwords/{id}', () => j('GET', `/api/v1/passwords/${password}`, admin), 200, REQUESTS, CONCURRENCY));
    if (want('GET /api/v1/secrets (list)')) rows.push(await measure('GET /api/v1/secrets (list)', () => j('GET', '/api/v1/secrets', admin), 200, REQUESTS, CONCURRENCY));

    const signing = want('POST /api/v1/crypto/sign') ? await j('POST', '/api/v1/code-signing-keys', admin, { name: 'cost-hsm', backend: 'pkcs11', algorithm: 'EC_P256' }) : undefined;
    if (signing?.status === 201) {
      const keyId = signing.json().data.code_signing_key.id as string;
      const message = randomBytes(64).toString('base64');
      rows.push(await measure('POST /api/v1/crypto/sign', () => j('POST', '/api/v1/crypto/sign', admin, { backend: 'pkcs11', key_id: keyId, message, purpose: 'bench' }), 200));
    } else if (signing) process.stderr.write(`signing key not created (${signing.status} ${signing.text.slice(0, 200)}): sign skipped\n`);

    if (want('POST /api/v1/database/roles/{id}/credentials'))
      try {
      pgServer = await postgresServer(randomBytes(12).toString('hex'));
      const role = await databaseRole(j, admin, pgServer, 'cost');
      rows.push(await measure('POST /api/v1/database/roles/{id}/credentials', () => j('POST', `/api/v1/database/roles/${role}/credentials`, admin, { ttl_seconds: 600 }), 201));
    } catch (error) {
      process.stderr.write(`database lease skipped: ${(error as Error).message}\n`);
    }

    if (want('POST /api/v1/agent/access/{alias}')) {
    const profile = crypto.randomUUID();
    const secretId = secret.json().data.secret.id as string;
    await j('PUT', `/api/v1/agents/profiles/${profile}`, admin, { name: 'cost', enabled: true, grants: [{ alias: 'db', service: 'secret.read', resource: secretId }] });
    const key = generateDeviceKey('ed25519');
    const device = (await j('POST', '/api/v1/agents/devices', admin, { name: 'cost-dev', public_key: key.publicJwk, profile_id: profile })).json().data.device
      .id as string;
    rows.push(
      await measure(
        'POST /api/v1/agent/access/{alias}',
        async () => {
          const r = await signedFetch(rt.baseUrl, { id: device, key }, 'POST', '/api/v1/agent/access/db');
          return { status: r.status, text: JSON.stringify(r.body) };
        },
        200,
      ),
    );
    }
    return { routes: rows, health };
  } finally {
    await pgServer?.cleanup();
    rt.stop();
    setTimeout(() => rmSync(probeDir, { recursive: true, force: true }), 2000);
  }
}

/** Dollars per million requests of a route, by line item. */
export function priced(r: RouteCost, health: RouteCost) {
  const p = PRICES;
  const fnCpu = Math.max(0, r.per.cpuMs - health.per.cpuMs);
  const billedMs = Math.ceil(fnCpu * CPU_STRETCH + r.waitMs);
  const gbSecond = (ms: number) => (ms / 1000) * MEMORY_GB * p.lambdaGbSecond * 1e6;
  const invocations = 1 + r.per.writerInvocations;
  const items = {
    lambda: invocations * p.lambdaRequestPerMillion + gbSecond(billedMs) + COLD_RATE * invocations * gbSecond(INIT_MS),
    dynamodb: r.per.rru * p.dynamoRruPerMillion + r.per.wru * p.dynamoWruPerMillion,
    sqs: r.per.sqs * p.sqsPerMillion,
    kms: r.per.kms * p.kmsPer10k * 100,
    logs: (r.per.logBytes / 1e9) * p.logsIngestPerGb * 1e6,
    xray: p.xraySampled * p.xrayPerMillionTraces,
  };
  const own = Object.values(items).reduce((a, b) => a + b, 0);
  return { items, own, total: own + p.apiGatewayRestPerMillion, billedMs, fnCpu };
}

const f2 = (v: number) => v.toFixed(2);
const pad = (s: string, n: number) => s.padStart(n);

export function printCosts(routes: readonly RouteCost[], health: RouteCost): string {
  const lines: string[] = [];
  lines.push(
    `Units per request (${REQUESTS} requests per route, ${CONCURRENCY > 1 ? `the reads ${CONCURRENCY} at a time, the rest one at a time` : 'one at a time'}${QUIET_RATE > 0 ? `, at most ${QUIET_RATE} a second (a quiet account; /health unpaced)` : ''}, after ${WARMUP} warm-up; less the idle process), ${new Date().toISOString()}`,
    '',
    '| route | RRU | WRU | SQS | KMS | log B | CPU ms | waits ms | billed ms | Lambda inv. |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const r of [health, ...routes]) {
    const c = priced(r, health);
    lines.push(
      `| ${r.route} | ${f2(r.per.rru)} | ${f2(r.per.wru)} | ${f2(r.per.sqs)} | ${f2(r.per.kms)} | ${r.per.logBytes.toFixed(0)} | ${f2(r.per.cpuMs)} | ${r.waitMs.toFixed(0)} | ${c.billedMs} | ${f2(1 + r.per.writerInvocations)} |`,
    );
  }
  lines.push('', 'Calls per request (median request of each route):', '');
  for (const r of routes) lines.push(`- ${r.route}: ${r.ops}`);
  lines.push(
    '',
    `USD per million requests, us-east-1 list prices of ${PRICES.date}; Lambda arm64 ${MEMORY_GB * 1024} MB, billed ms = (CPU − /health's) × ${CPU_STRETCH.toFixed(2)} + waits,`,
    `INIT ${INIT_MS} ms billed on ${(COLD_RATE * 100).toFixed(1)} % of invocations; X-Ray at ${(PRICES.xraySampled * 100).toFixed(0)} % sampled:`,
    '',
    '| route | Lambda | DynamoDB | SQS | KMS | Logs | X-Ray | **own** | + API GW | total |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const r of routes) {
    const c = priced(r, health);
    const i = c.items;
    lines.push(
      `| ${r.route} | ${f2(i.lambda)} | ${f2(i.dynamodb)} | ${f2(i.sqs)} | ${f2(i.kms)} | ${f2(i.logs)} | ${f2(i.xray)} | **${f2(c.own)}** | ${f2(PRICES.apiGatewayRestPerMillion)} | ${f2(c.total)} |`,
    );
  }
  const busy = routes.find((r) => r.route === BUSY_ROUTE);
  const quiet = routes.find((r) => r.route === 'GET /api/v1/secrets/{name}');
  if (busy && quiet) {
    const [b, q] = [priced(busy, health), priced(quiet, health)];
    const ratio = (x: number, y: number) => (y === 0 ? '—' : `×${(x / y).toFixed(2)}`);
    lines.push(
      '',
      `GET of a secret, one busy container against the quiet run of the same route (baseline, same runtime, this run): ${busy.processRate.toFixed(1)} requests a second as the runtime's clock counted them${busy.processRate !== busy.rate ? ` (paced: ${busy.rate.toFixed(1)} a real second, ${busy.lanes} in flight; scripts/bench/cost-probe.mjs)` : `, ${busy.lanes} in flight`}, against ${quiet.rate.toFixed(1)} requests/s ${quiet.lanes > 1 ? `${quiet.lanes} at a time` : 'one at a time'}:`,
      '',
      '| per request | quiet (baseline) | busy | busy / quiet |',
      '|---|---:|---:|---:|',
      `| WRU | ${f2(quiet.per.wru)} | ${f2(busy.per.wru)} | ${ratio(busy.per.wru, quiet.per.wru)} |`,
      `| RRU | ${f2(quiet.per.rru)} | ${f2(busy.per.rru)} | ${ratio(busy.per.rru, quiet.per.rru)} |`,
      `| log bytes | ${quiet.per.logBytes.toFixed(0)} | ${busy.per.logBytes.toFixed(0)} | ${ratio(busy.per.logBytes, quiet.per.logBytes)} |`,
      `| billed ms | ${q.billedMs} | ${b.billedMs} | ${ratio(b.billedMs, q.billedMs)} |`,
      `| own USD per million | ${f2(q.own)} | ${f2(b.own)} | ${ratio(b.own, q.own)} |`,
    );
    if (busy.processRate < LEASE_MAX / LEASE_WINDOW)
      lines.push('', `The busy run was under ${LEASE_MAX / LEASE_WINDOW} requests/s: the limiter's leases (k ≤ ${LEASE_MAX}, spent within ${LEASE_WINDOW} s) were not full.`);
  }
  const sm = PRICES.secretsManagerPer10kCalls * 100;
  lines.push('', `AWS Secrets Manager: ${f2(sm)} per million GetSecretValue calls, plus ${f2(PRICES.secretsManagerPerSecretMonth)} per secret-month.`);
  return lines.join('\n');
}

async function main() {
  const { routes, health } = await measureCosts();
  process.stdout.write(`\n${printCosts(routes, health)}\n`);
  if (process.env.COST_SKIP_FIXED === '1') return;
  process.stdout.write(`\n${printFixed(fixedCosts())}\n`);
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  main().catch((error: unknown) => {
    process.stderr.write(`${String((error as Error).stack ?? error)}\n`);
    process.exit(1);
  });
}

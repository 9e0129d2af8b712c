/**
 * `npm run bench:cold [-- --runs N] [--dir dist/lambda]`: what a cold start of each shipped
 * function costs. A benchmark, not a test: it prints figures and judges them against the
 * targets of issue 13, it asserts nothing.
 *
 * Input: the output of `npm run build` (infra/bundle.ts: dist/lambda/<asset>/<folder>/<module>.mjs
 * and build-manifest.json); the npm script builds first. Per handler-module asset:
 * - zipped bytes: the asset directory as the zip archive `cdk deploy` uploads, computed in
 *   memory without a zip library: the CDK CLI zips an asset with yazl from buffers (raw
 *   deflate at zlib's default level, DOS timestamps only, no extra fields, sizes known up
 *   front so no data descriptor), so each file costs its node:zlib deflateRaw output plus a
 *   30-byte local header and a 46-byte central-directory entry (each with the file name),
 *   and the archive a 22-byte end record.
 * - module init: a fresh Node 22 process (Lambda's nodejs22.x major; node_modules/.bin/node
 *   when it is 22, else `npx -p node@22`) with the environment a deployed function gets
 *   imports the module; the time from process start (performance.timeOrigin) until the
 *   import resolved, median of --runs (default 5, at least 5) runs, and the RSS then.
 *   Runs go round-robin over all modules, so a burst of load elsewhere spreads over them.
 * - Next to them, built the same way (infra/bundle.ts) in the same run: an empty handler
 *   (Node's own start-up) and an SDK-only module (@aws-sdk/client-dynamodb + lib-dynamodb).
 *
 * Targets (issue 13): median zipped asset <= 250 KB and none over 600 KB (KB = 1000 bytes);
 * median init <= 2x the SDK-only baseline.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { deflateRawSync } from 'node:zlib';
import { buildFunctions, DEFAULT_OUT_DIR } from '../../infra/bundle.js';
import { type BuildManifest, MANIFEST } from '../../infra/handlers.js';
import { assetId, lambdaEntry } from '../../infra/handlers.js';
import { ROUTES, type Route } from '../../lib/routes.js';

const HERE = resolve(import.meta.dirname, 'cold');
const KB = 1000;
const TARGET_MEDIAN_KB = 250;
const TARGET_MAX_KB = 600;
const TARGET_INIT_RATIO = 2;

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' }, dir: { type: 'string', default: DEFAULT_OUT_DIR } } });
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 5) throw new Error('--runs must be an integer of at least 5');

/** Size of a zip archive of these files (stored deflated), without writing it. */
function zippedBytes(dir: string): number {
  let total = 22; // end of central directory
  for (const rel of readdirSync(dir, { recursive: true }).map(String)) {
    const file = join(dir, rel);
    if (!statSync(file).isFile()) continue;
    const name = Buffer.byteLength(rel.split('\\').join('/'));
    total += 30 + name + deflateRawSync(readFileSync(file)).length + 46 + name;
  }
  return total;
}

function dirBytes(dir: string): number {
  return readdirSync(dir, { recursive: true })
    .map((rel) => statSync(join(dir, String(rel))))
    .filter((s) => s.isFile())
    .reduce((n, s) => n + s.size, 0);
}

/** The Node 22 binary: node_modules/.bin/node when it is 22, else the one npx -p node@22 provides. */
function node22(): string {
  const local = resolve('node_modules/.bin/node');
  const probe = (cmd: string, args: string[]) => spawnSync(cmd, [...args, '-p', 'process.version + " " + process.execPath'], { encoding: 'utf8' });
  for (const [cmd, args] of [
    [local, []],
    ['npx', ['-y', '-p', 'node@22', 'node']],
  ] as const) {
    const out = probe(cmd, [...args]);
    const [version, path] = (out.stdout ?? '').trim().split(' ');
    if (out.status === 0 && version?.startsWith('v22.') && path) return path;
  }
  throw new Error('no Node 22: npm ci installs it (optional dependency node-linux-*), or npx -p node@22 must work');
}

/** What a deployed function's environment holds (infra/api-stack.ts, plus the runtime's own). */
const LAMBDA_ENV: Record<string, string> = {
  AWS_REGION: 'us-east-1',
  AWS_DEFAULT_REGION: 'us-east-1',
  AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
  AWS_LAMBDA_FUNCTION_NAME: 'secrets-api-bench',
  AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '512',
  AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
  AWS_LAMBDA_LOG_FORMAT: 'JSON',
  AWS_ACCESS_KEY_ID: 'bench',
  AWS_SECRET_ACCESS_KEY: 'bench',
  AWS_SESSION_TOKEN: 'bench',
  TZ: ':UTC',
  LANG: 'en_US.UTF-8',
  TABLE_NAME: 'secrets-api-data-Table',
  KEY_PROVIDER: 'kms',
  KMS_KEY_ID: 'arn:aws:kms:us-east-1:111122223333:key/00000000-0000-0000-0000-000000000000',
  QUEUE_PROVIDER: 'sqs',
  WEBHOOK_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/111122223333/secrets-api-webhooks',
  SERVICE_NAME: 'secrets-api',
  SERVICE_VERSION: '0.1.0',
  PUBLIC_BASE_URL: 'https://abcdef1234.execute-api.us-east-1.amazonaws.com/prod',
  SIGNING_KMS_ENABLED: '0',
};

interface Subject {
  readonly module: string;
  readonly kind: 'baseline' | 'handler';
  readonly file: string;
  readonly dir: string;
  readonly routes: number;
}

interface Sample {
  readonly ms: number;
  readonly rss: number;
}

function measure(nodeBin: string, file: string, cwd: string): Sample | { error: string } {
  const out = spawnSync(nodeBin, [join(HERE, 'probe.mjs'), pathToFileURL(file).href], {
    cwd,
    env: { ...LAMBDA_ENV, PATH: process.env.PATH ?? '/usr/bin:/bin' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  try {
    return JSON.parse(out.stdout) as Sample | { error: string };
  } catch {
    return { error: `probe exited with ${out.status}: ${out.stderr.trim().split('\n').at(-1) ?? ''}` };
  }
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

async function main() {
  const outDir = resolve(values.dir);
  const manifest = JSON.parse(readFileSync(join(outDir, MANIFEST), 'utf8')) as BuildManifest;
  const routesOf = new Map<string, number>();
  for (const r of ROUTES) routesOf.set(lambdaEntry(r).module, (routesOf.get(lambdaEntry(r).module) ?? 0) + 1);

  const baseDir = mkdtempSync(join(tmpdir(), 'bench-cold-baselines-'));
  const baselineRoutes = ['baseline/empty', 'baseline/sdk-only'].map((m) => ({ key: m, handler: `${m}.handler` }) as Route);
  // the baselines bundle the SDK as it is (no stand-ins): what any Lambda function pays for it.
  // The handlers' credential stand-in (infra/shims/credential-provider-node.ts) would cut the
  // SDK-only module too (README, "Benchmarks"), but the reference must not move with our own
  // changes to the build.
  await buildFunctions({ outDir: baseDir, routes: baselineRoutes, functionsDir: join(HERE, 'functions'), jobs: [], sourceMaps: false, shims: {} });

  const subjects: Subject[] = [
    ...['baseline/empty', 'baseline/sdk-only'].map((m) => ({
      module: m,
      kind: 'baseline' as const,
      dir: join(baseDir, assetId(m)),
      file: join(baseDir, assetId(m), `${m}.mjs`),
      routes: 0,
    })),
    ...Object.values(manifest.assets).map((a) => ({
      module: a.module,
      kind: 'handler' as const,
      dir: join(outDir, a.dir),
      file: join(outDir, a.dir, a.file),
      routes: routesOf.get(a.module) ?? 0,
    })),
  ];

  const nodeBin = node22();
  const started = Date.now();
  const load = loadavg()[0]!;
  process.stderr.write(
    `bench:cold: ${subjects.length - 2} handler modules from ${relative(process.cwd(), outDir)} + 2 baselines, ${runs} runs each, ` +
      `Node ${spawnSync(nodeBin, ['-v'], { encoding: 'utf8' }).stdout.trim()} (${nodeBin})\n`,
  );
  const samples = new Map<string, Sample[]>(subjects.map((s) => [s.module, []]));
  const errors = new Map<string, string>();
  const cwd = mkdtempSync(join(tmpdir(), 'bench-cold-cwd-'));
  for (let round = 0; round < runs; round++) {
    for (const s of subjects) {
      if (errors.has(s.module)) continue;
      const r = measure(nodeBin, s.file, cwd);
      if ('error' in r) errors.set(s.module, r.error);
      else samples.get(s.module)!.push(r);
    }
    process.stderr.write(`  round ${round + 1}/${runs} done\n`);
  }
  rmSync(cwd, { recursive: true, force: true });

  const rows = subjects.map((s) => {
    const xs = samples.get(s.module)!;
    return {
      ...s,
      zipped: zippedBytes(s.dir),
      raw: dirBytes(s.dir),
      initMs: xs.length ? median(xs.map((x) => x.ms)) : Number.NaN,
      rssMiB: xs.length ? median(xs.map((x) => x.rss)) / 1024 / 1024 : Number.NaN,
      error: errors.get(s.module),
    };
  });
  rmSync(baseDir, { recursive: true, force: true });
  const empty = rows.find((r) => r.module === 'baseline/empty')!;
  const sdk = rows.find((r) => r.module === 'baseline/sdk-only')!;
  const handlers = rows.filter((r) => r.kind === 'handler').sort((a, b) => b.zipped - a.zipped);
  if (empty.error || sdk.error) throw new Error(`a baseline failed to import: ${empty.error ?? sdk.error}`);

  const f1 = (n: number) => (Number.isNaN(n) ? '—' : n.toFixed(1));
  const kb = (n: number) => (n / KB).toFixed(1);
  const lines = [
    '| module | routes | zipped KB | unzipped KB | init ms (median) | init ÷ SDK-only | RSS MiB |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...[empty, sdk, ...handlers].map(
      (r) =>
        `| ${r.kind === 'baseline' ? `*${r.module}*` : `\`${r.module}\``} | ${r.routes || ''} | ${kb(r.zipped)} | ${kb(r.raw)} | ` +
        `${r.error ? `import fails: ${r.error}` : f1(r.initMs)} | ${r.error ? '' : (r.initMs / sdk.initMs).toFixed(2)} | ${f1(r.rssMiB)} |`,
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n\n`);

  const zipped = handlers.map((r) => r.zipped);
  const ok = handlers.filter((r) => !r.error);
  const ratios = ok.map((r) => r.initMs / sdk.initMs);
  const netRatios = ok.map((r) => (r.initMs - empty.initMs) / (sdk.initMs - empty.initMs));
  const over = handlers.filter((r) => r.zipped > TARGET_MAX_KB * KB);
  const medZip = median(zipped);
  const medRatio = median(ratios);
  const verdict = (met: boolean) => (met ? 'met' : 'MISSED');
  const summary = [
    `handler modules: ${handlers.length}, ${ok.length} import cleanly${ok.length < handlers.length ? `; FAIL AT IMPORT: ${handlers.filter((r) => r.error).map((r) => r.module).join(', ')}` : ''}`,
    `zipped asset: median ${kb(medZip)} KB, max ${kb(Math.max(...zipped))} KB (${handlers[0]!.module}); target median <= ${TARGET_MEDIAN_KB} KB: ${verdict(medZip <= TARGET_MEDIAN_KB * KB)}` +
      `${medZip > TARGET_MEDIAN_KB * KB ? ` by ${kb(medZip - TARGET_MEDIAN_KB * KB)} KB` : ''}; none over ${TARGET_MAX_KB} KB: ${verdict(over.length === 0)}` +
      `${over.length ? ` (${over.length}: ${over.map((r) => `${r.module} ${kb(r.zipped)}`).join(', ')})` : ''}`,
    `init (process start -> import resolved): empty handler ${f1(empty.initMs)} ms, SDK-only ${f1(sdk.initMs)} ms; handlers median ${f1(median(ok.map((r) => r.initMs)))} ms, max ${f1(Math.max(...ok.map((r) => r.initMs)))} ms`,
    `median init ÷ SDK-only: ${medRatio.toFixed(2)}× (target <= ${TARGET_INIT_RATIO}×: ${verdict(medRatio <= TARGET_INIT_RATIO)}` +
      `${medRatio > TARGET_INIT_RATIO ? ` by ${(medRatio - TARGET_INIT_RATIO).toFixed(2)}×; over 2×: ${ok.filter((r) => r.initMs / sdk.initMs > TARGET_INIT_RATIO).length} modules` : ''}); ` +
      `above the empty handler only: median ${median(netRatios).toFixed(2)}× the SDK-only module's own init`,
    `RSS after init: empty ${f1(empty.rssMiB)} MiB, SDK-only ${f1(sdk.rssMiB)} MiB, handlers median ${f1(median(ok.map((r) => r.rssMiB)))} MiB, max ${f1(Math.max(...ok.map((r) => r.rssMiB)))} MiB`,
    `took ${((Date.now() - started) / 1000).toFixed(0)} s; load average ${load.toFixed(1)} at start, ${loadavg()[0]!.toFixed(1)} at end (the machine is shared: absolute ms vary with it, the ratios less)`,
  ];
  process.stdout.write(`${summary.join('\n')}\n`);
}

await main();

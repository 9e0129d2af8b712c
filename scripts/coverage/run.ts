/**
 * The suite's runner, in two modes:
 *
 * `npm test` / `npm run coverage`: the local tiers (LOCAL_PROJECTS of vitest.config.ts: unit,
 * integration, infra and the HTTP suite on the source runtime) once, with the coverage of both
 * processes that run the code under test merged into one report over lib/ and functions/:
 * - the test workers (vitest's V8 provider: unit tests and in-process calls);
 * - the local runtime the global setup starts (raw V8 coverage via NODE_V8_COVERAGE,
 *   converted by scripts/coverage/runtime.ts through tsx's source maps to the .ts sources);
 *   with `--project artifact` named, each function process of the artifact runtime too.
 * It prints statements, branches, functions and lines per folder, writes coverage/merged
 * (html, lcov, json) and exits non-zero when the suite fails or a threshold is not met.
 *
 * `npm run test:artifact` (`--artifact`): the artifact tier (the HTTP suite through the built
 * bundles, as the synthesized templates wire them), without coverage; CI runs it after `npm
 * test`. On a whole run it also holds every built route to a 2xx (ARTIFACT_FULL_RUN).
 *
 * A failed suite is said first and last, with its cause (what the global setups recorded in
 * SUITE_FAILURE_FILE, e.g. a runtime that did not start), and no coverage is read then.
 * `--typecheck` (npm test) runs TypeScript 7's `tsc --noEmit` beside the suite; a failed type check stops the
 * suite and is the run's first FAIL line.
 * A signal to this process goes on to vitest, whose setups stop the runtimes' process groups.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { setPriority, tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import libCoverage from 'istanbul-lib-coverage';
import libReport from 'istanbul-lib-report';
import reports from 'istanbul-reports';
import { LOCAL_PROJECTS } from '../../vitest.config.js';
import { artifactCoverage } from './artifact.js';
import { project, runtimeCoverage } from './runtime.js';

/** Branch coverage each folder must reach (issue 24). Never lowered to pass. */
export const THRESHOLDS: Record<string, { branches: number }> = {
  lib: { branches: 85 },
  functions: { branches: 80 },
};

/**
 * Waits (up to 30 s) until the directory's coverage files no longer grow (none at all: a run
 * without the source runtime). The setup waits for the runtime's exit, so this is a guard.
 */
async function settled(dir: string): Promise<void> {
  const sizes = () => readdirSync(dir).filter((f) => f.startsWith('coverage-')).map((f) => statSync(join(dir, f)).size).join(',');
  let last = '';
  for (const until = Date.now() + 30_000; Date.now() < until; ) {
    const now = sizes();
    if (now === last) return;
    last = now;
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * Every temporary file of the run goes into one directory of its own (TMPDIR for the run's
 * processes: vitest, its workers, the runtimes, their function environments, DynamoDB Local's
 * scripts, the tools they start), removed on every way out of this process. What is still
 * there at the end is said first (what left it: each creator removes its own), so a passing
 * run leaves nothing in the system's temporary directory. Before, a passing run left about a
 * dozen directories there (syntheses, bundles, docs builds, runtime data).
 */
const runTmp = mkdtempSync(join(tmpdir(), 'secrets-api-run-'));
process.env.TMPDIR = runTmp;
process.on('exit', () => {
  const left = readdirSync(runTmp);
  if (left.length > 0) {
    // mkdtemp's six random characters collapse, so that 7 syntheses read as one name ×7
    const names = left.map((n) => n.replace(/[A-Za-z0-9]{6}$/, (tail) => (/[A-Z0-9]/.test(tail) && /[a-z]/.test(tail) ? '*' : tail))).sort();
    const counted = [...new Set(names)].map((n) => `${n}${names.filter((m) => m === n).length > 1 ? ` ×${names.filter((m) => m === n).length}` : ''}`);
    process.stdout.write(`[test] temporary files the run's processes left (removed with the run's directory): ${counted.join(', ')}\n`);
  }
  rmSync(runTmp, { recursive: true, force: true });
});

/** `npm run test:artifact`: the artifact tier alone, no coverage (the last `npm test`'s report in coverage/ stays). */
const artifactTier = process.argv.includes('--artifact');
const root = resolve('.');
const out = join(root, 'coverage');
const runtimeDir = join(out, 'runtime');
// coverage/mutation (npm run mutation) is kept: it holds Stryker's incremental results
if (!artifactTier) {
  for (const dir of ['workers', 'runtime', 'merged']) rmSync(join(out, dir), { recursive: true, force: true });
  mkdirSync(runtimeDir, { recursive: true });
}

/** Runs a child with this terminal, passing SIGINT/SIGTERM/SIGHUP on; resolves with its exit code. */
let current: ChildProcess | undefined;
/** The type check beside the suite (`--typecheck`): a signal stops it too, not only vitest. */
let typeChecker: ChildProcess | undefined;
/** The signal that stopped the run: it is the run's cause, not a failed type check. */
let interrupted: NodeJS.Signals | undefined;
const signalCode = (signal: NodeJS.Signals) => 128 + (signal === 'SIGINT' ? 2 : signal === 'SIGTERM' ? 15 : 1);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    interrupted = signal;
    if (typeChecker && typeChecker.exitCode === null) typeChecker.kill(signal);
    if (current && current.exitCode === null) current.kill(signal);
    else stopped(signal);
  });
}
function stopped(signal: NodeJS.Signals): never {
  process.stderr.write(`\nFAIL the run was stopped by ${signal}: no coverage is read\n`);
  process.exit(signalCode(signal));
}
function run(command: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return new Promise((ok) => {
    current = spawn(command, args, { stdio: 'inherit', env });
    current.on('exit', (code, signal) => ok(code ?? (signal ? 128 : 1)));
  });
}

const since = (start: number) => `${Math.round((Date.now() - start) / 1000)} s`;
/** A step said as it begins, every 30 s while it lasts, and with its duration when it ends. */
async function step<T>(what: string, body: () => Promise<T>): Promise<T> {
  const start = Date.now();
  process.stdout.write(`[test] ${what}\n`);
  const beat = setInterval(() => process.stdout.write(`[test] still ${what} (${since(start)})\n`), 30_000);
  try {
    return await body();
  } finally {
    clearInterval(beat);
    process.stdout.write(`[test] ${what}: done in ${since(start)}\n`);
  }
}

// Arguments narrow the run (files, --project): then the figures are printed but only a
// whole run is held to the thresholds and to "every built route answered 2xx".
const typecheck = process.argv.includes('--typecheck');
/**
 * TypeScript 7's compiler (the devDependency `typescript-go`, an alias of typescript@7), its
 * native binary spawned directly, so a signal to the run reaches it. On one thread: it runs
 * beside the suite on a 2-core machine, where its threads would only compete with the suite.
 * Measured 2026-11-28 on this code, with a bundle build beside it: TypeScript 7 took 33 CPU-s on
 * its default threads and 19 on one, in the same 21-23 s of wall. Paired with TypeScript 5 on a
 * quieter machine (farm-bench, median of 3): 13.7 CPU-s against 59.7 (README, "Testing"). TypeScript 5
 * stays installed for openapi-typescript (scripts/client.ts), which needs its compiler API.
 */
function nativeTypeChecker(): string {
  const pkg = `@typescript/typescript-${process.platform}-${process.arch}`;
  return join(dirname(createRequire(import.meta.url).resolve(`${pkg}/package.json`)), 'lib', 'tsc');
}

const args = process.argv.slice(2).filter((a) => a !== '--typecheck' && a !== '--artifact');
const whole = args.length === 0;
/** The projects the mode runs, unless the arguments name their own. */
const projectArgs = args.some((a) => a === '--project' || a.startsWith('--project='))
  ? []
  : (artifactTier ? ['artifact'] : LOCAL_PROJECTS).flatMap((p) => ['--project', p]);
/**
 * The type check runs beside the suite, at a lower priority (it only has to end before the
 * suite does): on two cores it fills the time the suite's setups spend waiting. Its output is
 * kept; when it fails, it is printed with its cause first and the suite is stopped.
 */
let typeCheck: Promise<number> | undefined;
if (typecheck) {
  const started = Date.now();
  process.stdout.write('[test] type-checking (tsc --noEmit) beside the suite\n');
  typeCheck = new Promise<number>((done) => {
    const tsc = spawn(nativeTypeChecker(), ['--noEmit', '--singleThreaded'], { stdio: ['ignore', 'pipe', 'pipe'] });
    typeChecker = tsc;
    try {
      if (tsc.pid) setPriority(tsc.pid, 10);
    } catch {
      // not allowed here: it runs at the suite's priority
    }
    let output = '';
    tsc.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    tsc.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    tsc.on('exit', (code) => {
      const status = code ?? 1;
      if (status === 0) process.stdout.write(`[test] type-checking (tsc --noEmit): passed in ${since(started)}\n`);
      else if (!interrupted) {
        const first = output.split('\n').find((l) => l.trim() !== '') ?? 'no output';
        process.stderr.write(`\nFAIL the type check failed (tsc --noEmit exit ${status}): ${first}\n${output}\nstopping the suite\n`);
        if (current && current.exitCode === null) current.kill('SIGTERM');
      }
      done(status);
    });
  });
}
const failureFile = join(mkdtempSync(join(tmpdir(), 'secrets-api-suite-')), 'causes.txt');
const status = await step(artifactTier ? 'running the artifact tier (vitest)' : 'running the suite (vitest)', () =>
  run(
    join(root, 'node_modules/.bin/vitest'),
    ['run', '--config', artifactTier ? 'vitest.config.ts' : 'scripts/coverage/vitest.config.ts', ...projectArgs, ...args],
    {
      ...process.env,
      ...(artifactTier ? {} : { RUNTIME_COVERAGE_DIR: runtimeDir }),
      SUITE_FAILURE_FILE: failureFile,
      ...(whole ? { ARTIFACT_FULL_RUN: '1' } : {}),
    },
  ),
);
if (interrupted) stopped(interrupted);
if (typeCheck) {
  const tsc = await step('waiting for the type check', () => typeCheck!);
  if (tsc !== 0) {
    process.stderr.write(`\nFAIL the type check failed (tsc --noEmit exit ${tsc}): the errors are above\n`);
    process.exit(tsc);
  }
}
const causes = existsSync(failureFile) ? readFileSync(failureFile, 'utf8').trim() : '';
rmSync(dirname(failureFile), { recursive: true, force: true });
if (status !== 0 || causes) {
  // before any coverage is read: a suite that did not run has none, and its cause comes first
  process.stderr.write(
    `\nFAIL ${artifactTier ? 'the artifact tier' : 'the test suite'} failed (vitest exit ${status})${causes ? `: ${causes.split('\n').join('; ')}` : ': see the failed tests above'}\n${artifactTier ? '' : 'coverage figures are not computed for a failed run\n'}`,
  );
  process.exit(status || 1);
}
if (artifactTier) process.exit(0);

// the runtimes write their coverage when they exit, which the suite's teardown only starts
await settled(runtimeDir);
const artifactDir = join(runtimeDir, 'artifact');
if (existsSync(join(artifactDir, 'v8'))) await settled(join(artifactDir, 'v8'));

const map = libCoverage.createCoverageMap(JSON.parse(readFileSync(join(out, 'workers/coverage-final.json'), 'utf8')));
const runtime = await step('reading the source runtime\'s coverage', () => runtimeCoverage(runtimeDir, root, Object.keys(THRESHOLDS)));
const artifact = existsSync(artifactDir)
  ? await step("reading the artifact functions' coverage (through the bundles' source maps)", () => artifactCoverage(artifactDir, root, Object.keys(THRESHOLDS)))
  : { map: libCoverage.createCoverageMap({}), processes: 0, bundles: 0, unmapped: [], incomplete: [] };
if (runtime.processes === 0 && whole) {
  process.stderr.write('no source runtime coverage was found: the merged figures would hide everything the runtime runs\n');
  process.exit(1);
}
for (const url of runtime.mismatched) process.stderr.write(`left out (regenerated code differs from what ran): ${url}\n`);
for (const bundle of artifact.unmapped) process.stderr.write(`left out (no source map kept for the bundle): ${bundle}\n`);
for (const file of artifact.incomplete) process.stderr.write(`left out (a function process's coverage file is cut short: it was killed while writing it): ${file}\n`);
// a module the source runtime loaded ran all of its top level; a bundle holds only what its
// handler uses (tree-shaken), so code that maps to nothing in it counts as not run there
for (const [ran, moduleCount] of [
  [runtime.map, 1],
  [artifact.map, 0],
] as const) {
  for (const file of ran.files()) {
    const data = ran.fileCoverageFor(file).data;
    if (map.files().includes(file)) {
      // JSON round trip: end columns "to the end of the line" are null in vitest's data
      const onto = JSON.parse(JSON.stringify(map.fileCoverageFor(file).data)) as libCoverage.FileCoverageData;
      map.merge({ [file]: project(onto, JSON.parse(JSON.stringify(data)), moduleCount) });
    } else {
      map.merge({ [file]: JSON.parse(JSON.stringify(data)) });
    }
  }
}

const merged = join(out, 'merged');
const context = libReport.createContext({ dir: merged, coverageMap: map, defaultSummarizer: 'nested' });
for (const name of ['html', 'lcovonly', 'json'] as const) reports.create(name).execute(context);

const pct = (m: libCoverage.CoverageSummaryData[keyof libCoverage.CoverageSummaryData]) =>
  `${m.pct.toFixed(2).padStart(6)} % (${m.covered}/${m.total})`;
const rows: string[] = [];
let failed = false;
for (const [folder, threshold] of Object.entries(THRESHOLDS)) {
  const summary = libCoverage.createCoverageSummary();
  for (const file of map.files()) {
    if (relative(root, file).startsWith(`${folder}/`)) summary.merge(map.fileCoverageFor(file).toSummary());
  }
  const ok = summary.branches.pct >= threshold.branches;
  failed ||= !ok;
  rows.push(
    `| ${`${folder}/`.padEnd(10)} | ${pct(summary.statements)} | ${pct(summary.branches)} | ${pct(summary.functions)} | ${pct(summary.lines)} | branches >= ${threshold.branches} %: ${ok ? 'met' : 'NOT MET'} |`,
  );
}
process.stdout.write(
  [
    '',
    `merged coverage: test workers + ${runtime.processes} source runtime process(es)${artifact.processes > 0 ? ` + ${artifact.processes} artifact function process(es) over ${artifact.bundles} bundles` : ''}; report in ${relative(root, merged)}/index.html`,
    '| folder     | statements             | branches               | functions              | lines                  | threshold |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n'),
);
if (failed && whole) process.exit(1);
if (failed) process.stdout.write('(a partial run: the thresholds apply to the whole suite only)\n');

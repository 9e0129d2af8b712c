import type { ChildProcess } from 'node:child_process';
import {
  appendFileSync,
  copyFileSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import type { TestProject } from 'vitest/node';
import { generateApiKey } from '../../lib/auth/api-keys.js';
import { freePort } from '../../scripts/local/ports.js';
import { ARTIFACT_CONTROL_FILE } from '../helpers/artifact.js';
import { findLeaks } from '../helpers/leaks.js';
import { spawnGroup, stopGroup } from './processes.js';

declare module 'vitest' {
  export interface ProvidedContext {
    baseUrl: string;
    rootKey: string;
    dynamoEndpoint: string;
    tableName: string;
    logFile: string;
    /** The runtime's DATA_DIR (its keyring master key lives in keyring/master.key). */
    dataDir: string;
    /** Which runtime serves baseUrl: the TypeScript sources, or the built artifact. */
    runtime: 'source' | 'artifact';
    /** Written once the runtime listens, or with the cause when it did not start (test/setup/ready.ts waits for it). */
    runtimeReadyFile: string;
  }
}

export interface RuntimeOptions {
  readonly artifact: boolean;
  /** Extra environment of the runtime process. */
  readonly env?: Record<string, string>;
  /** Runs after the suite, before the runtime stops and the leak scan (e.g. the artifact's report checks). */
  readonly checks?: (dataDir: string) => string[];
}

/**
 * How long one step of the runtime's start may go without the runtime reporting the next
 * (its `[start] ...` lines, scripts/local/start.ts): building the bundles and synthesizing
 * the app (artifact) get RUNTIME_BUILD_TIMEOUT_S (default 1200 s: 283-334 s were measured
 * on this 2-core machine under load); importing every function's module in a fresh process
 * gets RUNTIME_IMPORT_TIMEOUT_S per module (default 3 s; 172 s for 329 under load), so it
 * scales with the app; every other step (DynamoDB Local, the table, the gateway)
 * RUNTIME_STEP_TIMEOUT_S (default 300 s). Each step restarts the clock, so a slow machine
 * that makes progress is waited for, and a step that hangs is named.
 */
export function stepTimeoutMs(step: string, env: NodeJS.ProcessEnv = process.env): { ms: number; knob: string } {
  const seconds = (name: string, fallback: number) => {
    const v = Number(env[name]);
    return Number.isFinite(v) && v > 0 ? v : fallback;
  };
  if (/\b(build|synth)/i.test(step)) return { ms: seconds('RUNTIME_BUILD_TIMEOUT_S', 1200) * 1000, knob: 'RUNTIME_BUILD_TIMEOUT_S' };
  const modules = /importing each of the (\d+)/.exec(step);
  if (modules) {
    const ms = Math.max(seconds('RUNTIME_STEP_TIMEOUT_S', 300), Number(modules[1]) * seconds('RUNTIME_IMPORT_TIMEOUT_S', 3)) * 1000;
    return { ms, knob: 'RUNTIME_IMPORT_TIMEOUT_S (seconds per module)' };
  }
  return { ms: seconds('RUNTIME_STEP_TIMEOUT_S', 300) * 1000, knob: 'RUNTIME_STEP_TIMEOUT_S' };
}

/** The last `lines` lines of a text. */
export const tail = (text: string, lines = 40) => text.trimEnd().split('\n').slice(-lines).join('\n');

/**
 * Records a cause of failure where scripts/coverage/run.ts repeats it as the last line of a
 * failed run (SUITE_FAILURE_FILE), and prints it at once with what explains it.
 */
export function reportFailure(cause: string, detail = ''): void {
  process.stderr.write(`\nFAIL ${cause}\n${detail ? `${detail}\n` : ''}`);
  if (process.env.SUITE_FAILURE_FILE) appendFileSync(process.env.SUITE_FAILURE_FILE, `${cause}\n`);
}

/**
 * Launches one local runtime for a test project (`scripts/local/start.ts`, exactly as `npm
 * start` does: DynamoDB Local in memory + a gateway; with `artifact`, the built bundles as the
 * synthesized templates wire them) in a process group of its own (test/setup/processes.ts),
 * with its output captured to a file and its progress printed. A runtime that does not start
 * fails the run with the cause first and its log's tail. After the suite, the whole table
 * and the captured logs are searched for every canary value and API key, and any hit fails
 * the run; so does any process of its group still running after it stopped. Under `npm run
 * coverage` (RUNTIME_COVERAGE_DIR) the source runtime writes raw V8 coverage when it exits,
 * and the artifact runtime its bundles' maps and its function processes' coverage (`artifact/`).
 *
 * It does not wait for the runtime: everything a test file injects is known before the start
 * (ports, directories, the root key, the table's name), so the global setup returns at once and
 * the tiers that need no runtime (unit, integration, infra: `sequence.groupOrder` 0 in
 * vitest.config.ts) run while it builds and starts. `started` settles when it listens or fails;
 * either way the ready file says so, and each test file of the project waits for it before it
 * runs (test/setup/ready.ts). vitest runs every global setup before any test file, so a setup
 * that waited held the whole suite for the runtimes' start (minutes for the artifact).
 */
export async function launchRuntime(project: TestProject, opts: RuntimeOptions): Promise<{ started: Promise<void>; stop: () => Promise<void> }> {
  const name = `local ${opts.artifact ? 'artifact' : 'source'} runtime`;
  const [port, dynamoPort] = [await freePort(), await freePort()];
  const dataDir = mkdtempSync(join(tmpdir(), `secrets-api-test-${opts.artifact ? 'artifact' : 'source'}-`));
  const logFile = join(dataDir, 'server.log');
  const rootKey = generateApiKey().key;
  // the source runtime's table; the artifact runtime names its table as told (LOCAL_TABLE_NAME), so a test knows it before the start
  const tableName = 'secrets';
  const log = createWriteStream(logFile);
  // npm run coverage: the source runtime's own process, or each function process of the artifact's
  const coverageDir = process.env.RUNTIME_COVERAGE_DIR;
  // The suite's requests go to the address it listens on, and its issuer, sign-in and PKI URLs
  // name that same address: PUBLIC_BASE_URL is set here, not left to `npm start`'s default
  // (http://localhost:<port>, scripts/local/start.ts), so that default can change without
  // changing every issuer the tests compare with. Passkeys still work: a loopback address
  // stands for `localhost` as the relying party (lib/users/passkeys.ts), and the passkey
  // tests open the page there. test/runtime/npm-start-url.test.ts runs `npm start` as a
  // person does, with its own default.
  const baseUrl = `http://127.0.0.1:${port}`;
  const server: ChildProcess = spawnGroup(
    process.execPath,
    ['--import', 'tsx', resolve('scripts/local/start.ts'), ...(opts.artifact ? ['--artifact'] : [])],
    {
      env: {
        ...process.env,
        ...(coverageDir ? (opts.artifact ? { ARTIFACT_COVERAGE_DIR: join(coverageDir, 'artifact') } : { NODE_V8_COVERAGE: coverageDir }) : {}),
        PORT: String(port),
        DYNAMODB_PORT: String(dynamoPort),
        DYNAMODB_IN_MEMORY: '1',
        DATA_DIR: dataDir,
        SECRETS_DEV_ROOT_KEY: rootKey,
        PUBLIC_BASE_URL: baseUrl,
        NODE_NO_WARNINGS: '1',
        ...(opts.artifact
          ? {
              ARTIFACT_REPORT_FILE: join(dataDir, 'artifact-report.json'),
              LOCAL_TABLE_NAME: tableName,
              // the tests' control server (test/helpers/artifact.ts retireEnvironments)
              ARTIFACT_CONTROL_FILE: join(dataDir, ARTIFACT_CONTROL_FILE),
            }
          : {}),
        ...opts.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  let stderr = '';
  server.stderr!.on('data', (c: Buffer) => {
    stderr += c.toString();
    output += c.toString();
    log.write(c);
  });
  const readyFile = join(dataDir, 'ready.json');
  const dynamoEndpoint = `http://127.0.0.1:${dynamoPort}`;
  project.provide('baseUrl', baseUrl);
  project.provide('rootKey', rootKey);
  project.provide('dynamoEndpoint', dynamoEndpoint);
  project.provide('tableName', tableName);
  project.provide('logFile', logFile);
  project.provide('dataDir', dataDir);
  project.provide('runtime', opts.artifact ? 'artifact' : 'source');
  project.provide('runtimeReadyFile', readyFile);
  // whole or not at all: a test file may read it at any moment
  const writeReady = (state: { ok: true; seconds: number } | { error: string }) => {
    writeFileSync(`${readyFile}.part`, JSON.stringify(state));
    renameSync(`${readyFile}.part`, readyFile);
  };
  const startedAt = Date.now();
  const started = (async () => {
    try {
      await new Promise<void>((ok, fail) => {
        let timer: NodeJS.Timeout | undefined;
        const step = (what: string) => {
          clearTimeout(timer);
          const { ms, knob } = stepTimeoutMs(what);
          timer = setTimeout(() => {
            fail(new Error(`${name} did not start: "${what}" took more than ${ms / 1000} s (set ${knob} to wait longer)`));
          }, ms);
        };
        step('starting');
        let pending = '';
        server.stdout!.on('data', (c: Buffer) => {
          const text = c.toString();
          output += text;
          log.write(c);
          pending += text;
          const lines = pending.split('\n');
          pending = lines.pop() ?? '';
          for (const line of lines) {
            const progress = /^\[start\] (.*)$/.exec(line);
            if (progress) {
              step(progress[1]!);
              process.stderr.write(`${name}: ${progress[1]} (${Math.round((Date.now() - startedAt) / 1000)} s)\n`);
            }
            const listening = /listening on \S+(?: \(table ([^)\s]+)\))?/.exec(line);
            if (listening) {
              clearTimeout(timer);
              if (listening[1] && listening[1] !== tableName) fail(new Error(`${name} named its table ${listening[1]}, not ${tableName}`));
              else ok();
            }
          }
        });
        server.on('exit', (code, signal) => {
          clearTimeout(timer);
          const cause =
            stderr
              .trim()
              .split('\n')
              .find((l) => l.trim() !== '') ?? `no message on stderr`;
          fail(new Error(`${name} exited (${signal ?? `code ${code}`}) before listening: ${cause}`));
        });
      });
    } catch (error) {
      const left = await stopGroup(server, 5_000);
      await new Promise((r) => log.end(r));
      const cause = (error as Error).message;
      reportFailure(
        cause,
        [
          `--- the last 40 lines of its output (all of it: ${logFile}) ---`,
          tail(output),
          '---',
          ...(left.length > 0 ? [`killed, still running after it stopped: ${left.join('; ')}`] : []),
        ].join('\n'),
      );
      writeReady({ error: cause });
      throw new Error(cause);
    }
    writeReady({ ok: true, seconds: Math.round((Date.now() - startedAt) / 1000) });
  })();
  // the failure is reported where it happens; a setup that does not wait must not see it as unhandled
  started.catch(() => undefined);

  const stop = async () => {
    // a runtime still starting when the run ends (a failure elsewhere, a signal) is stopped, not waited for
    if (!existsSync(readyFile)) {
      await stopGroup(server, 5_000);
      await started.catch(() => undefined);
    }
    if (!JSON.parse(readFileSync(readyFile, 'utf8')).ok) {
      keepLog(name, logFile);
      rmSync(dataDir, { recursive: true, force: true });
      return;
    }
    const problems: string[] = [];
    try {
      const leaks = await findLeaks({ dynamoEndpoint, tableName, logText: readFileSync(logFile, 'utf8') });
      if (leaks.length > 0) problems.push(`secret material leaked after the suite:\n${leaks.join('\n')}`);
    } finally {
      // the runtime writes its report (artifact) and coverage (source) as it exits; the artifact's
      // function environments write theirs first, up to 90 s on a busy machine (host.ts CLOSE_GRACE_MS)
      const left = await stopGroup(server, 120_000);
      if (left.length > 0) problems.push(`processes of the ${name} still running after it stopped (killed now):\n${left.join('\n')}`);
      await new Promise((r) => log.end(r));
    }
    if (opts.checks) problems.push(...opts.checks(dataDir));
    keepLog(name, logFile);
    rmSync(dataDir, { recursive: true, force: true });
    if (problems.length > 0) {
      // vitest reports a teardown error without failing the run: fail the process itself.
      reportFailure(`${name}: ${problems[0]!.split('\n')[0]}`, problems.join('\n'));
      process.exitCode = 1;
    }
  };
  return { started, stop };
}

/**
 * The runtime's whole output (its functions' log lines included) is kept after the run in
 * build/test-logs/<runtime>.log, replacing the previous run's: a test that failed on what a
 * function logged (a relay that did not list, a request that failed inside) can be read after
 * the run, when the runtime's data directory is gone.
 */
function keepLog(name: string, logFile: string): void {
  if (!existsSync(logFile)) return;
  const kept = resolve('build/test-logs', `${name.replace(/\s+/g, '-')}.log`);
  mkdirSync(dirname(kept), { recursive: true });
  copyFileSync(logFile, kept);
  process.stderr.write(`${name}: its output is kept in ${relative(process.cwd(), kept)}\n`);
}

/** Launches the runtime and waits until it listens (a start that fails rejects, after it is reported); resolves with its teardown. */
export async function startRuntime(project: TestProject, opts: RuntimeOptions): Promise<() => Promise<void>> {
  const { started, stop } = await launchRuntime(project, opts);
  await started;
  return stop;
}

/**
 * Lambda execution environments for the built bundles: each one a fresh Node 22 process
 * (scripts/local/artifact/bootstrap.mjs) with the function's code asset as its task root,
 * only the environment the template gives the function (plus what Lambda itself sets and
 * the local-world substitutions), its layers on NODE_PATH, and its timeout. An environment
 * serves one invocation at a time; a busy function gets more environments, up to
 * `perFunction`; idle environments beyond `maxEnvironments` are retired, least recently used
 * first. A crash or a timeout discards the environment, as Lambda does.
 *
 * An environment's end is Lambda's (`retire`): a runtime that registered an extension
 * (bootstrap.mjs serves the Extensions API an internal extension calls) gets SIGTERM and
 * SHUTDOWN_BUDGET_MS to end, then is killed; one without gets no signal it can see.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { freemem, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { node22 } from '../node22.js';
import type { RawAwsRequest } from './aws-calls.js';
import { ACCOUNT, type FunctionSpec, REGION } from './deployment.js';

const BOOTSTRAP = join(dirname(fileURLToPath(import.meta.url)), 'bootstrap.mjs');

export interface LambdaError {
  readonly errorType: string;
  readonly errorMessage: string;
  readonly stack?: readonly string[];
}

export type Invocation =
  | { readonly ok: true; readonly result: unknown }
  | { readonly ok: false; readonly error: LambdaError; readonly phase: 'init' | 'invoke' };

export interface InitFailure {
  readonly functionName: string;
  readonly handler: string;
  readonly error: LambdaError;
}

export interface HostOptions {
  /** Variables every function gets on top of its own (the local world: endpoints, credentials). */
  readonly overlay: (fn: FunctionSpec) => Record<string, string | undefined>;
  readonly perFunction?: number;
  /** Environments kept at most (default `environmentCeiling()`); below it, idle ones are retired when memory runs short. */
  readonly maxEnvironments?: number;
  /** The memory available now (default `availableMemory()`; tests give their own). */
  readonly availableMemory?: () => number;
  /** Where the environments' stdout and stderr go (Lambda: CloudWatch Logs). */
  readonly log?: NodeJS.WritableStream;
  /**
   * A lane for functions whose invocations must not overlap across environments (a local
   * stand-in that is not safe for concurrent writers from several processes), or undefined.
   */
  readonly lane?: (fn: FunctionSpec) => string | undefined;
  /**
   * Where each environment that serves invocations writes raw V8 coverage when it is retired
   * (NODE_V8_COVERAGE; the coverage of the bundles, scripts/coverage/artifact.ts), or
   * undefined.
   */
  readonly coverageDir?: string;
  /** Every SigV4-signed request an environment of `fn` sends (bootstrap.mjs records them), with the invocation it belongs to. */
  readonly onAwsRequest?: (fn: FunctionSpec, request: RawAwsRequest, invocation: string | undefined) => void;
  /** Every invocation, when it has an environment: whether that environment was started for it (a cold start). */
  readonly onInvoke?: (fn: FunctionSpec, cold: boolean) => void;
  /** Between SIGTERM and the end of a runtime with an extension (default SHUTDOWN_BUDGET_MS, Lambda's). */
  readonly shutdownBudgetMs?: number;
}

/**
 * What Lambda gives the runtime process between SIGTERM and SIGKILL when the function has an
 * internal extension (300 ms with external extensions only): aws-samples/
 * graceful-shutdown-with-aws-lambda, README; lib/core/shutdown.ts.
 */
export const SHUTDOWN_BUDGET_MS = 500;

/**
 * How many environments may stay alive at most: ARTIFACT_MAX_ENVIRONMENTS when set, else 400
 * (more than a whole run's 336 functions). Below it, memory decides (`underPressure`).
 */
export function environmentCeiling(env: NodeJS.ProcessEnv = process.env): number {
  const set = Number(env.ARTIFACT_MAX_ENVIRONMENTS);
  return env.ARTIFACT_MAX_ENVIRONMENTS && Number.isInteger(set) && set > 0 ? set : 400;
}

/** The memory the kernel can give without swapping (MemAvailable), or the free memory where /proc/meminfo has none. */
export function availableMemory(meminfo: () => string = () => readFileSync('/proc/meminfo', 'utf8')): number {
  try {
    const kb = /^MemAvailable:\s+(\d+) kB$/m.exec(meminfo())?.[1];
    if (kb) return Number(kb) * 1024;
  } catch {
    // not Linux
  }
  return freemem();
}

/** How long a retired idle environment may take to exit by itself (writing its coverage) before SIGKILL. */
const EVICTION_GRACE_MS = 10_000;
/**
 * The same at close, when every environment exits at once: a whole run ends with about 390 of
 * them, and beside two CPU-bound processes some took longer than 10 s to write their coverage
 * (a file cut short by SIGKILL stopped the coverage report: scripts/busy-ci.sh, 2026-11-28).
 */
const CLOSE_GRACE_MS = 90_000;

/** Environments kept whatever the memory (the import check's first modules, a file's functions). */
const KEPT_UNDER_PRESSURE = 16;

/**
 * Whether idle environments must make room: the memory available has fallen under a fifth of
 * the machine's (at least 2 GiB), which the test workers, DynamoDB Local and the type check
 * beside the runtime need. An environment holds 25-85 MB of its own (private dirty, measured
 * during a whole run: 29 MB on average over 90 environments while the route matrix ran them,
 * 67-69 MB for those that served a file's requests), so a fixed count per gigabyte either
 * wastes a quiet machine (with the former "half the free memory at 75 MB each", a whole run
 * started 954-1,027 environments for 336 functions and retired 851-953 for room; each start is
 * 0.2-0.3 CPU-s to import a bundle, plus its coverage and its first request's compilation) or
 * overfills a busy one.
 */
export function underPressure(available: number, total: number = totalmem()): boolean {
  return available < Math.max(2 * 1024 ** 3, total / 5);
}

interface Environment {
  readonly fn: FunctionSpec;
  readonly child: ChildProcess;
  readonly ready: Promise<LambdaError | undefined>;
  busy: boolean;
  lastUsed: number;
  dead: boolean;
  /** The extensions the runtime registered (bootstrap.mjs): Lambda sends SIGTERM at shutdown only when there is one. */
  readonly extensions: string[];
  /** The process has begun to exit by itself (its exit handlers ran; bootstrap.mjs writes to fd 4). */
  exiting: boolean;
}

export class FunctionHost {
  private readonly environments = new Map<string, Environment[]>();
  private readonly waiting = new Map<string, (() => void)[]>();
  private readonly lanes = new Map<string, Promise<unknown>>();
  private readonly node = node22();
  readonly initFailures: InitFailure[] = [];
  /** Environments started (cold starts), for the report. */
  coldStarts = 0;
  /** Environments retired for room (each a cold start again when its function is next called). */
  evictions = 0;
  /** The most environments alive at once, for the report. */
  peakEnvironments = 0;
  /** Environments ended with SIGTERM (an extension registered), and of those, the ones not exiting within the budget. */
  readonly shutdowns = { terminated: 0, overBudget: 0 };
  /** The ceiling in force. */
  readonly maxEnvironments: number;
  private closed = false;

  constructor(private readonly options: HostOptions) {
    this.maxEnvironments = options.maxEnvironments ?? environmentCeiling();
  }

  /** The process environment of `fn`, exactly as its environments get it. */
  environmentOf(fn: FunctionSpec): Record<string, string> {
    const env: Record<string, string | undefined> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      LANG: 'en_US.UTF-8',
      TZ: ':UTC',
      AWS_REGION: REGION,
      AWS_DEFAULT_REGION: REGION,
      AWS_EXECUTION_ENV: `AWS_Lambda_${fn.runtime}`,
      AWS_LAMBDA_FUNCTION_NAME: fn.functionName,
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memoryMb),
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
      AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${fn.functionName}`,
      LAMBDA_TASK_ROOT: fn.codeDir,
      _HANDLER: fn.handler,
      ...(fn.layerDirs.length ? { NODE_PATH: fn.layerDirs.map((d) => join(d, 'nodejs', 'node_modules')).join(':') } : {}),
      ...fn.environment,
      ...this.options.overlay(fn),
    };
    return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
  }

  /** Invokes `fn` with `event` as Lambda's synchronous Invoke would. */
  async invoke(fn: FunctionSpec, event: unknown, requestId: string = randomUUID()): Promise<Invocation> {
    const lane = this.options.lane?.(fn);
    if (!lane) return this.invokeNow(fn, event, requestId);
    const previous = this.lanes.get(lane) ?? Promise.resolve();
    const run = previous.then(() => this.invokeNow(fn, event, requestId));
    this.lanes.set(
      lane,
      run.catch(() => undefined),
    );
    return run;
  }

  private async invokeNow(fn: FunctionSpec, event: unknown, requestId: string): Promise<Invocation> {
    const env = await this.acquire(fn);
    try {
      const initError = await env.ready;
      if (initError) return { ok: false, error: initError, phase: 'init' };
      return await this.run(env, event, requestId);
    } finally {
      this.release(env);
    }
  }

  /**
   * Starts one environment of `fn` before its first invocation and reports whether its module
   * imports (the import check, scripts/local/artifact/runtime.ts). One that imports stays, idle,
   * and serves `fn`'s first invocation, as Lambda's proactive initialization does; one that does
   * not is retired. The import check's environments used to be retired at once: 98 cold starts
   * a run that served nothing.
   */
  async prewarm(fn: FunctionSpec): Promise<LambdaError | undefined> {
    this.evictIdle();
    const env = this.start(fn);
    this.environments.set(fn.key, [...(this.environments.get(fn.key) ?? []), env]);
    const error = await env.ready;
    if (error) await this.retire(env);
    else this.release(env);
    return error;
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.environments.values()].flat();
    await Promise.all(all.map((e) => this.retire(e, CLOSE_GRACE_MS)));
  }

  private start(fn: FunctionSpec): Environment {
    this.coldStarts++;
    const coverage = this.options.coverageDir ? { NODE_V8_COVERAGE: this.options.coverageDir } : {};
    const child = spawn(this.node, [BOOTSTRAP], {
      cwd: fn.codeDir,
      env: { ...this.environmentOf(fn), ...coverage },
      // fd 4: the process says when it begins to exit (bootstrap.mjs), so `retire` knows what its budget covered
      stdio: ['ignore', 'pipe', 'pipe', 'ipc', 'pipe'],
    });
    const log = this.options.log ?? process.stdout;
    child.stdout!.on('data', (c: Buffer) => log.write(c));
    child.stderr!.on('data', (c: Buffer) => log.write(c));
    const onAwsRequest = this.options.onAwsRequest;
    if (onAwsRequest) {
      child.on('message', (m: { type?: string; request?: RawAwsRequest; invocation?: string }) => {
        if (m?.type === 'aws-request' && m.request) onAwsRequest(fn, m.request, m.invocation);
      });
    }
    const env: Environment = {
      fn,
      child,
      busy: false,
      lastUsed: Date.now(),
      dead: false,
      extensions: [],
      exiting: false,
      ready: new Promise((resolve) => {
        const onMessage = (m: { type: string; error?: LambdaError }) => {
          if (m.type === 'ready') {
            child.off('message', onMessage);
            resolve(undefined);
          } else if (m.type === 'init_error') {
            child.off('message', onMessage);
            this.initFailures.push({ functionName: fn.functionName, handler: fn.handler, error: m.error! });
            resolve(m.error);
          }
        };
        child.on('message', onMessage);
        child.once('exit', (code, signal) =>
          resolve({ errorType: 'Runtime.ExitError', errorMessage: `the environment exited during init (code ${code}, signal ${signal})` }),
        );
      }),
    };
    child.on('message', (m: { type?: string; name?: string }) => {
      if (m?.type === 'extension' && typeof m.name === 'string') env.extensions.push(m.name);
    });
    (child.stdio[4] as NodeJS.ReadableStream | null)?.on('data', () => {
      env.exiting = true;
    });
    child.once('exit', () => {
      env.dead = true;
      this.remove(env);
    });
    return env;
  }

  private run(env: Environment, event: unknown, requestId: string): Promise<Invocation> {
    const { fn, child } = env;
    return new Promise((resolve) => {
      const deadlineMs = Date.now() + fn.timeoutSeconds * 1000;
      const done = (result: Invocation) => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(result);
      };
      const onMessage = (m: { type: string; id: string; result?: unknown; error?: LambdaError }) => {
        if (m.id !== requestId) return;
        if (m.type === 'result') done({ ok: true, result: m.result });
        else if (m.type === 'error') done({ ok: false, error: m.error!, phase: 'invoke' });
      };
      const onExit = (code: number | null, signal: string | null) =>
        done({
          ok: false,
          phase: 'invoke',
          error: { errorType: 'Runtime.ExitError', errorMessage: `the environment exited (code ${code}, signal ${signal})` },
        });
      const timer = setTimeout(() => {
        this.retire(env);
        done({
          ok: false,
          phase: 'invoke',
          error: { errorType: 'Sandbox.Timedout', errorMessage: `Task timed out after ${fn.timeoutSeconds}.00 seconds` },
        });
      }, fn.timeoutSeconds * 1000);
      child.on('message', onMessage);
      child.once('exit', onExit);
      child.send({
        type: 'invoke',
        id: requestId,
        event,
        context: { awsRequestId: requestId, deadlineMs, invokedFunctionArn: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${fn.functionName}` },
      });
    });
  }

  private async acquire(fn: FunctionSpec): Promise<Environment> {
    for (;;) {
      if (this.closed) throw new Error('the function host is closed');
      const envs = this.environments.get(fn.key) ?? [];
      const idle = envs.find((e) => !e.busy && !e.dead);
      if (idle) {
        idle.busy = true;
        this.options.onInvoke?.(fn, false);
        return idle;
      }
      if (envs.length < (this.options.perFunction ?? 4)) {
        this.evictIdle();
        const env = this.start(fn);
        env.busy = true;
        this.environments.set(fn.key, [...envs, env]);
        this.options.onInvoke?.(fn, true);
        return env;
      }
      await new Promise<void>((wake) => this.waiting.set(fn.key, [...(this.waiting.get(fn.key) ?? []), wake]));
    }
  }

  private release(env: Environment): void {
    env.busy = false;
    env.lastUsed = Date.now();
    this.wake(env.fn.key);
  }

  private wake(key: string): void {
    const queue = this.waiting.get(key);
    const next = queue?.shift();
    if (next) next();
  }

  /**
   * Makes room for one more environment: under the ceiling, none is retired while memory
   * allows; when it runs short, two idle ones are, least recently used first (one to make room,
   * one to give memory back), down to KEPT_UNDER_PRESSURE.
   */
  private evictIdle(): void {
    const all = [...this.environments.values()].flat();
    this.peakEnvironments = Math.max(this.peakEnvironments, all.length + 1);
    let excess = all.length + 1 - this.maxEnvironments;
    if (all.length >= KEPT_UNDER_PRESSURE && underPressure((this.options.availableMemory ?? availableMemory)())) excess = Math.max(excess, 2);
    if (excess <= 0) return;
    const idle = all.filter((e) => !e.busy).sort((a, b) => a.lastUsed - b.lastUsed);
    for (const e of idle.slice(0, excess)) {
      this.evictions++;
      void this.retire(e, EVICTION_GRACE_MS);
    }
  }

  /**
   * Retires the idle environments of `functionKey` now, as Lambda's shutdown would (the tests'
   * hook, through the artifact runtime's control server: test/helpers/artifact.ts). Resolves
   * once they have exited, with how many there were and how many got SIGTERM.
   */
  async retireIdle(functionKey: string): Promise<{ retired: number; terminated: number }> {
    const idle = (this.environments.get(functionKey) ?? []).filter((e) => !e.busy && !e.dead);
    const terminated = idle.filter((e) => e.extensions.length > 0).length;
    await Promise.all(idle.map((e) => this.retire(e, EVICTION_GRACE_MS)));
    return { retired: idle.length, terminated };
  }

  /**
   * Ends an environment: at once (SIGKILL: a timed-out or probed one), or, given a grace (an
   * idle one, or all at close), as Lambda's shutdown does:
   * - a runtime that registered an extension gets SIGTERM and `shutdownBudgetMs` (500 ms) to
   *   begin its exit; one that has not by then is ended (SIGKILL);
   * - one without an extension gets no signal (Lambda sends SIGTERM only with an extension): it
   *   is ended at once.
   * "Ended" keeps the coverage `npm run coverage -- --project artifact` measures: with coverage on, the channel is closed so that
   * the process exits by itself (bootstrap.mjs exits at once: nothing of the function runs after
   * it, as after SIGKILL) and writes its coverage, SIGKILL after the grace; without coverage,
   * SIGKILL. A process that began its exit within the budget also gets the grace to finish it.
   */
  private retire(env: Environment, graceMs = 0): Promise<void> {
    this.remove(env);
    if (env.dead) return Promise.resolve();
    return new Promise((resolve) => {
      const timers: NodeJS.Timeout[] = [];
      env.child.once('exit', () => {
        for (const t of timers) clearTimeout(t);
        resolve();
      });
      const kill = () => env.child.kill('SIGKILL');
      if (graceMs <= 0 || !env.child.connected) {
        kill();
        return;
      }
      const end = () => {
        if (!this.options.coverageDir) return kill();
        if (env.child.connected) env.child.disconnect();
        timers.push(setTimeout(kill, graceMs));
      };
      if (env.extensions.length === 0) {
        end();
        return;
      }
      this.shutdowns.terminated++;
      env.child.kill('SIGTERM');
      timers.push(
        setTimeout(
          // after this turn's I/O (setImmediate): the exit notice may be waiting behind a busy host's timers
          () =>
            setImmediate(() => {
              if (env.dead) return;
              if (env.exiting) {
                timers.push(setTimeout(kill, graceMs));
                return;
              }
              this.shutdowns.overBudget++;
              end();
            }),
          this.options.shutdownBudgetMs ?? SHUTDOWN_BUDGET_MS,
        ),
      );
    });
  }

  private remove(env: Environment): void {
    const envs = this.environments.get(env.fn.key);
    if (!envs) return;
    const rest = envs.filter((e) => e !== env);
    if (rest.length) this.environments.set(env.fn.key, rest);
    else this.environments.delete(env.fn.key);
    this.wake(env.fn.key);
  }
}

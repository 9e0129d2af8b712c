import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { TestProject } from 'vitest/node';
import { generateApiKey } from '../../lib/auth/api-keys.js';
import { findLeaks } from '../helpers/leaks.js';
import { freePort } from '../../scripts/local/ports.js';

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
 * Starts one local runtime for a test project (`scripts/local/start.ts`, exactly as `npm
 * start` does: DynamoDB Local in memory + a gateway; with `artifact`, the built bundles as the
 * synthesized templates wire them), with its output captured to a file. After the suite, the
 * whole table and the captured logs are searched for every canary value and API key, and any
 * hit fails the run. Under `npm run coverage` (RUNTIME_COVERAGE_DIR) the source runtime
 * writes raw V8 coverage when it exits.
 */
export async function startRuntime(project: TestProject, opts: RuntimeOptions) {
  const [port, dynamoPort] = [await freePort(), await freePort()];
  const dataDir = mkdtempSync(join(tmpdir(), `secrets-api-test-${opts.artifact ? 'artifact' : 'source'}-`));
  const logFile = join(dataDir, 'server.log');
  const rootKey = generateApiKey().key;
  const log = createWriteStream(logFile);
  const coverageDir = !opts.artifact ? process.env.RUNTIME_COVERAGE_DIR : undefined;
  const server: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', resolve('scripts/local/start.ts'), ...(opts.artifact ? ['--artifact'] : [])],
    {
      env: {
        ...process.env,
        ...(coverageDir ? { NODE_V8_COVERAGE: coverageDir } : {}),
        PORT: String(port),
        DYNAMODB_PORT: String(dynamoPort),
        DYNAMODB_IN_MEMORY: '1',
        DATA_DIR: dataDir,
        SECRETS_DEV_ROOT_KEY: rootKey,
        NODE_NO_WARNINGS: '1',
        ...(opts.artifact ? { ARTIFACT_REPORT_FILE: join(dataDir, 'artifact-report.json') } : {}),
        ...opts.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  server.stdout!.pipe(log);
  let stderr = '';
  server.stderr!.on('data', (c: Buffer) => {
    stderr += c.toString();
    log.write(c);
  });
  let tableName = 'secrets';
  await new Promise<void>((ok, fail) => {
    const timer = setTimeout(
      () => fail(new Error(`local ${opts.artifact ? 'artifact' : 'source'} runtime did not start in time:\n${stderr}`)),
      240_000,
    );
    server.stdout!.on('data', (c: Buffer) => {
      const line = /listening on \S+(?: \(table ([^)\s]+)\))?/.exec(c.toString());
      if (line) {
        if (line[1]) tableName = line[1];
        clearTimeout(timer);
        ok();
      }
    });
    server.on('exit', (code) => fail(new Error(`local ${opts.artifact ? 'artifact' : 'source'} runtime exited with ${code}:\n${stderr}`)));
  });
  const dynamoEndpoint = `http://127.0.0.1:${dynamoPort}`;
  project.provide('baseUrl', `http://127.0.0.1:${port}`);
  project.provide('rootKey', rootKey);
  project.provide('dynamoEndpoint', dynamoEndpoint);
  project.provide('tableName', tableName);
  project.provide('logFile', logFile);
  project.provide('dataDir', dataDir);
  project.provide('runtime', opts.artifact ? 'artifact' : 'source');

  return async () => {
    const problems: string[] = [];
    try {
      const leaks = await findLeaks({ dynamoEndpoint, tableName, logText: readFileSync(logFile, 'utf8') });
      if (leaks.length > 0) problems.push(`secret material leaked after the suite:\n${leaks.join('\n')}`);
    } finally {
      // the runtime writes its report (artifact) and coverage (source) as it exits
      const exited = new Promise((r) => server.once('exit', r));
      server.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 30_000).unref())]);
      await new Promise((r) => log.end(r));
    }
    if (opts.checks) problems.push(...opts.checks(dataDir));
    rmSync(dataDir, { recursive: true, force: true });
    if (problems.length > 0) {
      // vitest reports a teardown error without failing the run: fail the process itself.
      process.stderr.write(`\nFAIL (${opts.artifact ? 'artifact' : 'source'} runtime):\n${problems.join('\n')}\n`);
      process.exitCode = 1;
    }
  };
}

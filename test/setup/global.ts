import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { TestProject } from 'vitest/node';
import { generateApiKey } from '../../lib/auth/api-keys.js';
import { findLeaks } from '../helpers/leaks.js';

declare module 'vitest' {
  export interface ProvidedContext {
    baseUrl: string;
    rootKey: string;
    dynamoEndpoint: string;
    tableName: string;
    logFile: string;
    /** The runtime's DATA_DIR (its keyring master key lives in keyring/master.key). */
    dataDir: string;
  }
}

async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => ok(port));
    });
    s.on('error', fail);
  });
}

let server: ChildProcess | undefined;
let dataDir: string | undefined;

/**
 * Starts the real local runtime once for the whole suite (`scripts/local/start.ts`:
 * DynamoDB Local in memory + the local gateway), exactly as `npm start` does, with its
 * stdout (the structured logs) captured to a file. After the suite, the whole table and
 * the captured logs are searched for every canary value and API key: any hit fails the run.
 */
export default async function setup(project: TestProject) {
  const [port, dynamoPort] = [await freePort(), await freePort()];
  dataDir = mkdtempSync(join(tmpdir(), 'secrets-api-test-'));
  const logFile = join(dataDir, 'server.log');
  const rootKey = generateApiKey().key;
  const log = createWriteStream(logFile);
  server = spawn(process.execPath, ['--import', 'tsx', resolve('scripts/local/start.ts')], {
    env: {
      ...process.env,
      PORT: String(port),
      DYNAMODB_PORT: String(dynamoPort),
      DYNAMODB_IN_MEMORY: '1',
      DATA_DIR: dataDir,
      SECRETS_DEV_ROOT_KEY: rootKey,
      NODE_NO_WARNINGS: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  server.stdout!.pipe(log);
  let stderr = '';
  server.stderr!.on('data', (c: Buffer) => {
    stderr += c.toString();
    log.write(c);
  });
  await new Promise<void>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`local runtime did not start in time:\n${stderr}`)), 90_000);
    server!.stdout!.on('data', (c: Buffer) => {
      if (c.toString().includes('listening on')) {
        clearTimeout(timer);
        ok();
      }
    });
    server!.on('exit', (code) => fail(new Error(`local runtime exited with ${code}:\n${stderr}`)));
  });
  const dynamoEndpoint = `http://127.0.0.1:${dynamoPort}`;
  project.provide('baseUrl', `http://127.0.0.1:${port}`);
  project.provide('rootKey', rootKey);
  project.provide('dynamoEndpoint', dynamoEndpoint);
  project.provide('tableName', 'secrets');
  project.provide('logFile', logFile);
  project.provide('dataDir', dataDir);

  return async () => {
    try {
      const leaks = await findLeaks({ dynamoEndpoint, tableName: 'secrets', logText: readFileSync(logFile, 'utf8') });
      if (leaks.length > 0) {
        // vitest reports a teardown error without failing the run: fail the process itself.
        process.stderr.write(`\nFAIL secret material leaked after the suite:\n${leaks.join('\n')}\n`);
        process.exitCode = 1;
      }
    } finally {
      server?.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 500));
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    }
  };
}

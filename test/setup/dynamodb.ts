import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { ensureTable, startDynamoLocal, stopDynamoLocal, waitForDynamo } from '../../scripts/local/dynamodb.js';
import { freePort } from '../../scripts/local/ports.js';
import { reportFailure } from './runtime.js';
import { processAlive } from './processes.js';

/**
 * The integration tier's global setup (test/integration, and `npm run mutation` through
 * vitest.mutation.config.ts): DynamoDB Local in memory and the table, nothing else (no
 * gateway, no fauxqs). It provides the values the runtime's setup provides for in-process
 * library calls (test/helpers/in-process.ts). DynamoDB Local is killed on every exit of
 * this process (scripts/local/dynamodb.ts), and the run fails when it outlives its stop.
 */
export default async function setup(project: TestProject) {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'secrets-api-integration-'));
  const started = Date.now();
  process.stderr.write(`integration tier: starting DynamoDB Local on port ${port}\n`);
  const dynamo = startDynamoLocal({ port });
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await waitForDynamo(endpoint, undefined, dynamo);
    await ensureTable(endpoint, 'secrets');
  } catch (error) {
    await stopDynamoLocal(dynamo);
    reportFailure(`integration tier: DynamoDB Local did not start: ${(error as Error).message}`);
    throw error;
  }
  process.stderr.write(`integration tier: DynamoDB Local answers (${Math.round((Date.now() - started) / 1000)} s)\n`);
  project.provide('dynamoEndpoint', endpoint);
  project.provide('tableName', 'secrets');
  project.provide('dataDir', dataDir);
  return async () => {
    await stopDynamoLocal(dynamo);
    rmSync(dataDir, { recursive: true, force: true });
    if (dynamo.pid !== undefined && processAlive(dynamo.pid)) {
      reportFailure(`integration tier: DynamoDB Local (pid ${dynamo.pid}) still running after it was stopped`);
      process.exitCode = 1;
    }
  };
}

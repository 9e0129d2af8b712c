import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { ensureTable, startDynamoLocal, waitForDynamo } from '../../scripts/local/dynamodb.js';
import { freePort } from '../../scripts/local/ports.js';

/**
 * The light global setup of vitest.unit.config.ts (the unit tests alone, as Stryker runs
 * them): DynamoDB Local in memory and the table, no gateway. It provides the same values
 * the full suite's setup does for in-process library calls (test/helpers/in-process.ts).
 */
export default async function setup(project: TestProject) {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'secrets-api-unit-'));
  const dynamo = startDynamoLocal({ port });
  const endpoint = `http://127.0.0.1:${port}`;
  await waitForDynamo(endpoint);
  await ensureTable(endpoint, 'secrets');
  project.provide('dynamoEndpoint', endpoint);
  project.provide('tableName', 'secrets');
  project.provide('dataDir', dataDir);
  return async () => {
    dynamo.kill('SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
  };
}

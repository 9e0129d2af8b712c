/**
 * The embedded local runtime (`npm start`): DynamoDB Local with data under .data/, the
 * table, the local keyring, the operator account, and every route of the table served on
 * http://127.0.0.1:3000 through the local gateway. Ctrl-C stops everything cleanly.
 *
 * Environment: PORT (3000), DATA_DIR (.data), DYNAMODB_PORT (8000), DYNAMODB_IN_MEMORY=1
 * (keep nothing), SECRETS_DEV_ROOT_KEY (seed this operator admin key).
 */
import { resolve } from 'node:path';
import { mkdirSync } from 'node:fs';
import { JAVA_MISSING, ensureTable, javaAvailable, startDynamoLocal, waitForDynamo } from './dynamodb.js';

const port = Number(process.env.PORT ?? 3000);
const dataDir = resolve(process.env.DATA_DIR ?? '.data');
const dynamoPort = Number(process.env.DYNAMODB_PORT ?? 8000);
const inMemory = process.env.DYNAMODB_IN_MEMORY === '1';

async function main() {
  if (!javaAvailable()) {
    process.stderr.write(`${JAVA_MISSING}\n`);
    process.exit(1);
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const endpoint = `http://127.0.0.1:${dynamoPort}`;
  const dynamo = startDynamoLocal({ port: dynamoPort, ...(inMemory ? {} : { dataDir: resolve(dataDir, 'dynamodb') }) });
  let stopping = false;
  dynamo.on('exit', (code) => {
    if (!stopping) {
      process.stderr.write(`DynamoDB Local exited (code ${code}); is port ${dynamoPort} free? Set DYNAMODB_PORT to use another.\n`);
      process.exit(1);
    }
  });

  // Configuration of the handlers, read once by lib/config.ts.
  Object.assign(process.env, {
    TABLE_NAME: process.env.TABLE_NAME ?? 'secrets',
    DYNAMODB_ENDPOINT: endpoint,
    AWS_REGION: process.env.AWS_REGION ?? 'us-east-1',
    KEY_PROVIDER: 'local',
    LOCAL_MASTER_KEY_FILE: resolve(dataDir, 'keyring', 'master.key'),
    PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${port}`,
    // CRLs and CA certificates, published as files the gateway serves at /pki/ (AWS: an S3 bucket)
    PKI_PUBLIC_BASE_URL: process.env.PKI_PUBLIC_BASE_URL ?? `${process.env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${port}`}/pki`,
    PKI_PUBLISH_DIR: process.env.PKI_PUBLISH_DIR ?? resolve(dataDir, 'pki'),
    // development: ACME enrollment may use a local directory (pebble on 127.0.0.1)
    ACME_ALLOW_LOOPBACK: process.env.ACME_ALLOW_LOOPBACK ?? '1',
    DATABASE_ALLOW_LOOPBACK: process.env.DATABASE_ALLOW_LOOPBACK ?? '1',
  });
  // the SoftHSM2 token under DATA_DIR/softhsm (signing); without SoftHSM2 signing answers 503
  process.stdout.write(`${(await import('./softhsm.js')).configureLocalSigning(dataDir)}\n`);

  await waitForDynamo(endpoint);
  await ensureTable(endpoint, process.env.TABLE_NAME!);
  const stopEvents = (await import('./events.js')).startLocalEvents(); // outbox relay + webhook worker, in-process
  const stopSweeper = (await import('./sweeper.js')).startLeaseSweeper(); // database lease expiry
  const { seedRoot } = await import('./seed.js');
  const root = await seedRoot(process.env.SECRETS_DEV_ROOT_KEY || undefined);
  const { startGateway } = await import('./gateway.js');
  const server = await startGateway({ port, pkiDir: process.env.PKI_PUBLISH_DIR });

  process.stdout.write(`secrets API listening on http://127.0.0.1:${port} (DynamoDB Local on ${endpoint}, data in ${inMemory ? 'memory' : dataDir})\n`);
  if (root && !process.env.SECRETS_DEV_ROOT_KEY) {
    process.stdout.write(`generated platform-operator root key (shown once, keep it):\n  ${root.key}\n`);
  }

  const stop = () => {
    if (stopping) return;
    stopping = true;
    stopEvents();
    stopSweeper();
    server.close();
    server.closeAllConnections();
    dynamo.once('exit', () => process.exit(0));
    dynamo.kill('SIGTERM');
    setTimeout(() => process.exit(0), 5000).unref();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).message ?? String(error)}\n`);
  process.exit(1);
});

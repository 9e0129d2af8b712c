/**
 * The embedded local runtime (`npm start`): DynamoDB Local with data under .data/, the
 * table, the local keyring, the operator account, and every route of the table served on
 * http://localhost:3000 through the local gateway (listening on 127.0.0.1 only: loopback).
 * Ctrl-C stops everything cleanly.
 *
 * The URL it prints is `http://localhost:<port>`, not the IP address it listens on: WebAuthn
 * refuses an IP address as the relying party's ID, so passkeys work on the sign-in page only
 * at a host name (browsers resolve `localhost` to loopback themselves). It is also the
 * default PUBLIC_BASE_URL, so the issuer, the sign-in URLs, the PKI URLs and the passkeys'
 * relying party all name the address that was printed.
 *
 * Environment: PORT (3000), DATA_DIR (.data), DYNAMODB_PORT (8000), DYNAMODB_IN_MEMORY=1
 * (keep nothing), SECRETS_DEV_ROOT_KEY (seed this operator admin key), PUBLIC_BASE_URL
 * (http://localhost:<PORT>; the suite's runtime sets its own, test/setup/runtime.ts).
 *
 * `--artifact` (or SECRETS_RUNTIME=artifact) serves what `cdk deploy` ships instead of the
 * TypeScript sources: the built bundles, wired as the synthesized templates wire them, each
 * function in its own Node 22 process (scripts/local/artifact/runtime.ts). There:
 * ARTIFACT_ASSEMBLY serves a prebuilt cdk.out, ARTIFACT_CONTEXT (JSON) adds CDK context to the
 * synth, ARTIFACT_REPORT_FILE receives a JSON report (modules, answers per method, failures)
 * when the runtime stops, ARTIFACT_CONTROL_FILE receives the address of the tests' control
 * server (scripts/local/artifact/runtime.ts `controlFile`).
 *
 * It says what it is doing from its first second: one `[start] <step>` line per step (the
 * suite's setup times each step by them, test/setup/runtime.ts) and a "still ..." line every
 * 30 s of a long one. A port in use is answered with one line naming the variable to set,
 * before anything starts; DynamoDB Local never outlives this process (scripts/local/dynamodb.ts).
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';

const startedAt = Date.now();
let heartbeat: NodeJS.Timeout | undefined;
/** One step of the start, said as it begins (and every 30 s while it lasts). */
function progress(step: string): void {
  process.stdout.write(`[start] ${step}\n`);
  clearInterval(heartbeat);
  const since = Date.now();
  heartbeat = setInterval(() => {
    process.stdout.write(`        still ${step} (${Math.round((Date.now() - since) / 1000)} s; ${Math.round((Date.now() - startedAt) / 1000)} s since start)\n`);
  }, 30_000);
  heartbeat.unref();
}
const started = () => clearInterval(heartbeat);

const port = Number(process.env.PORT ?? 3000);
const dataDir = resolve(process.env.DATA_DIR ?? '.data');
const dynamoPort = Number(process.env.DYNAMODB_PORT ?? 8000);
const inMemory = process.env.DYNAMODB_IN_MEMORY === '1';

const artifact = process.argv.includes('--artifact') || process.env.SECRETS_RUNTIME === 'artifact';
/** What `npm start` prints and, unless PUBLIC_BASE_URL says otherwise, the service's public base (above). */
const localUrl = `http://localhost:${port}`;
const publicBaseUrl = process.env.PUBLIC_BASE_URL ?? localUrl;

/** Until the runtime is up, a signal ends the process at once (its exit handlers stop DynamoDB Local). */
const early = (signal: NodeJS.Signals) => process.exit(signal === 'SIGINT' ? 130 : 143);
process.on('SIGINT', early);
process.on('SIGTERM', early);
const up = () => {
  process.off('SIGINT', early);
  process.off('SIGTERM', early);
};

/**
 * Started by another process (the suite's setup, `npm start`), the runtime ends with it: when
 * its parent is gone (this process re-parented) it stops as on SIGTERM.
 */
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.kill(process.pid, 'SIGTERM');
}, 1000).unref();

async function main() {
  progress(`${artifact ? 'built artifact' : 'TypeScript sources'}: checking PORT ${port} and DYNAMODB_PORT ${dynamoPort}`);
  const { portProblem } = await import('./ports.js');
  const busy = await portProblem([
    { port, variable: 'PORT', host: '127.0.0.1' },
    { port: dynamoPort, variable: 'DYNAMODB_PORT', host: '0.0.0.0' },
  ]);
  if (busy) {
    started();
    process.stderr.write(`${busy}\n`);
    process.exit(1);
  }
  const { JAVA_MISSING, ensureTable, javaAvailable, startDynamoLocal, stopDynamoLocal, waitForDynamo } = await import('./dynamodb.js');
  if (artifact) return startArtifact(javaAvailable, JAVA_MISSING);
  if (!javaAvailable()) {
    process.stderr.write(`${JAVA_MISSING}\n`);
    process.exit(1);
  }
  // The tracer is off outside Lambda (lib/core/metrics.ts), but the X-Ray SDK it imports would
  // still track every promise's context through async hooks (cls-hooked) in its default mode:
  // 0.6 ms of CPU per request on a 2-core machine, for traces nobody records (README,
  // "Benchmarks"). Manual mode keeps the hooks off; set before any handler module loads.
  process.env.AWS_XRAY_MANUAL_MODE ??= '1';
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  progress('starting the local tools (breach corpus, IPFS blockstore)');
  const stopTools = await (await import('./tools.js')).startLocalTools(dataDir); // breach range corpus, IPFS blockstore (lib/tools)
  progress(`starting DynamoDB Local on port ${dynamoPort}`);
  const endpoint = `http://127.0.0.1:${dynamoPort}`;
  const dynamo = startDynamoLocal({ port: dynamoPort, ...(inMemory ? {} : { dataDir: resolve(dataDir, 'dynamodb') }) });
  let stopping = false;
  dynamo.on('exit', (code) => {
    if (!stopping) {
      process.stderr.write(`DynamoDB Local exited (code ${code}); is port ${dynamoPort} free? Set DYNAMODB_PORT to use another.\n`);
      process.exit(1);
    }
  });

  // the documents bucket on the local S3 engine (scripts/local/s3.ts), objects under DATA_DIR/s3
  progress('starting the local S3 and SQS engine (fauxqs)');
  const { LOCAL_DOCUMENTS_BUCKET, startLocalS3 } = await import('./s3.js');
  const s3 = await startLocalS3({ dataDir, buckets: [LOCAL_DOCUMENTS_BUCKET] });

  // Configuration of the handlers, read once by lib/config.ts.
  Object.assign(process.env, {
    // CloudWatch metrics (EMF lines on stdout, lib/core/metrics.ts): only when asked for
    POWERTOOLS_METRICS_DISABLED: process.env.POWERTOOLS_METRICS_DISABLED ?? 'true',
    DOCUMENTS_BUCKET: LOCAL_DOCUMENTS_BUCKET,
    DOCUMENTS_S3_ENDPOINT: s3.endpoint,
    TABLE_NAME: process.env.TABLE_NAME ?? 'secrets',
    // DYNAMODB_CLIENT_ENDPOINT: the handlers' endpoint when it is not DynamoDB Local itself (npm run bench:trips: a counting proxy)
    DYNAMODB_ENDPOINT: process.env.DYNAMODB_CLIENT_ENDPOINT ?? endpoint,
    AWS_REGION: process.env.AWS_REGION ?? 'us-east-1',
    KEY_PROVIDER: 'local',
    LOCAL_MASTER_KEY_FILE: resolve(dataDir, 'keyring', 'master.key'),
    PUBLIC_BASE_URL: publicBaseUrl,
    // CRLs and CA certificates, published as files the gateway serves at /pki/ (AWS: an S3 bucket)
    PKI_PUBLIC_BASE_URL: process.env.PKI_PUBLIC_BASE_URL ?? `${publicBaseUrl.replace(/\/+$/, '')}/pki`,
    PKI_PUBLISH_DIR: process.env.PKI_PUBLISH_DIR ?? resolve(dataDir, 'pki'),
    // development: ACME enrollment may use a local directory (pebble on 127.0.0.1)
    ACME_ALLOW_LOOPBACK: process.env.ACME_ALLOW_LOOPBACK ?? '1',
    DATABASE_ALLOW_LOOPBACK: process.env.DATABASE_ALLOW_LOOPBACK ?? '1',
    // billing through the local payment provider, the mock routes on (scripts/local/billing.ts)
    ...(await import('./billing.js')).localBillingEnv(dataDir),
  });
  // the audit queue on the local SQS engine (the S3 engine's fauxqs): read-only routes send
  // their audit entries there, the audit writer below writes them (scripts/local/audit.ts)
  const audit = await (await import('./audit.js')).createLocalAuditQueue({ endpoint: s3.endpoint, region: process.env.AWS_REGION! });
  Object.assign(process.env, {
    AUDIT_QUEUE_URL: audit.queueUrl,
    // the SDK's SQS calls go to fauxqs, signed with stand-in credentials (as the artifact runtime's functions do)
    AWS_ENDPOINT_URL_SQS: s3.endpoint,
    AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID ?? 'local',
    AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY ?? 'local',
  });
  // the SoftHSM2 token under DATA_DIR/softhsm (signing); without SoftHSM2 signing answers 503
  process.stdout.write(`${(await import('./softhsm.js')).configureLocalSigning(dataDir)}\n`);

  progress(`waiting for DynamoDB Local to answer on ${endpoint}`);
  await waitForDynamo(endpoint, undefined, dynamo);
  progress(`creating the table ${process.env.TABLE_NAME}`);
  await ensureTable(endpoint, process.env.TABLE_NAME!, inMemory ? 'DynamoDB Local (in memory)' : resolve(dataDir, 'dynamodb'));
  progress('loading the handlers and starting the gateway');
  const stopEvents = (await import('./events.js')).startLocalEvents({ streamEndpoint: endpoint, tableName: process.env.TABLE_NAME! }); // outbox relay (the table's stream) + webhook worker, in-process
  const stopSweeper = (await import('./sweeper.js')).startLeaseSweeper(); // database lease expiry
  const stopJobs = (await import('./jobs.js')).startLocalJobs(); // extraction jobs, in-process (lib/tools/jobs.ts)
  audit.startWriter(); // the audit queue's mapping: functions/audit/writer.ts
  const { seedRoot } = await import('./seed.js');
  const root = await seedRoot(process.env.SECRETS_DEV_ROOT_KEY || undefined);
  const { startGateway } = await import('./gateway.js');
  const server = await startGateway({ port, pkiDir: process.env.PKI_PUBLISH_DIR });
  started();

  process.stdout.write(
    `secrets API listening on ${localUrl} (127.0.0.1 only; DynamoDB Local on ${endpoint}, data in ${inMemory ? 'memory' : dataDir}${publicBaseUrl === localUrl ? '' : `; PUBLIC_BASE_URL ${publicBaseUrl}`})\n`,
  );
  if (root && !process.env.SECRETS_DEV_ROOT_KEY) {
    process.stdout.write(`generated platform-operator root key (shown once, keep it):\n  ${root.key}\n`);
  }

  const stop = () => {
    if (stopping) return;
    stopping = true;
    stopEvents();
    stopSweeper();
    void audit.stop().finally(() => s3.stop());
    stopTools();
    stopJobs();
    server.close();
    server.closeAllConnections();
    void stopDynamoLocal(dynamo).then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  up();
}

async function startArtifact(javaAvailable: () => boolean, JAVA_MISSING: string) {
  const { LAMBDA_NODE_MAJOR, node22 } = await import('./node22.js');
  if (Number(process.versions.node.split('.')[0]) !== LAMBDA_NODE_MAJOR) {
    // the runtime itself needs Node 22 (fauxqs uses node:sqlite); the functions run under it too
    const { spawn } = await import('node:child_process');
    progress(`re-running under Node ${LAMBDA_NODE_MAJOR} (the functions' runtime)`);
    started();
    up(); // signals go to the child, which stops what it started; this process follows it
    const child = spawn(node22(), [...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit', env: { ...process.env, SECRETS_RUNTIME: 'artifact' } });
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
    child.on('exit', (code) => process.exit(code ?? 1));
    return;
  }
  if (!javaAvailable()) {
    process.stderr.write(`${JAVA_MISSING}\n`);
    process.exit(1);
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  progress('starting the local tools (breach corpus, IPFS blockstore)');
  await (await import('./tools.js')).startLocalTools(dataDir); // breach range corpus, IPFS blockstore (lib/tools)
  progress(process.env.ARTIFACT_ASSEMBLY ? `reading the cloud assembly ${process.env.ARTIFACT_ASSEMBLY}` : 'building the function bundles (minutes on a 2-core machine)');
  const { startArtifactRuntime, writeReport } = await import('./artifact/runtime.js');
  const runtime = await startArtifactRuntime({
    port,
    dataDir,
    dynamoPort,
    inMemory,
    ...(process.env.ARTIFACT_ASSEMBLY ? { assembly: resolve(process.env.ARTIFACT_ASSEMBLY) } : {}),
    ...(process.env.ARTIFACT_CONTEXT ? { context: JSON.parse(process.env.ARTIFACT_CONTEXT) as Record<string, unknown> } : {}),
    ...(process.env.ARTIFACT_COVERAGE_DIR ? { coverageDir: resolve(process.env.ARTIFACT_COVERAGE_DIR) } : {}),
    ...(process.env.ARTIFACT_CONTROL_FILE ? { controlFile: resolve(process.env.ARTIFACT_CONTROL_FILE) } : {}),
  });
  const stop = async (code: number) => {
    const reportFile = process.env.ARTIFACT_REPORT_FILE;
    if (reportFile) writeReport(reportFile, await runtime.report());
    await runtime.stop();
    process.exit(code);
  };
  if (runtime.importFailures.length > 0) {
    process.stderr.write(`built modules that fail at import (each of their routes would answer 500 in Lambda):\n`);
    for (const f of runtime.importFailures) process.stderr.write(`  ${f.module}: ${f.error}\n`);
    return stop(1);
  }
  started();
  process.stdout.write(`secrets API (built artifact) listening on ${runtime.url} (table ${runtime.tableName})\n`);
  let stopping = false;
  const onSignal = () => {
    if (stopping) return;
    stopping = true;
    void stop(0);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  up();
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).message ?? String(error)}\n`);
  process.exit(1);
});

/**
 * The artifact runtime (`npm start -- --artifact`, and the `artifact` project: `npm run test:artifact`):
 * serves exactly what `cdk deploy` ships. It builds the bundles and synthesizes the app (or
 * takes a prebuilt cloud assembly), then stands the templates up locally:
 *
 * - the table as the data stack declares it, on DynamoDB Local;
 * - the queues (with their redrive policy) on fauxqs, the SQS event-source mappings, the
 *   table stream's mapping on DynamoDB Local's streams API, and the scheduled rules
 *   (scripts/local/artifact/sources.ts);
 * - API Gateway from the methods, integrations and gateway responses (gateway.ts);
 * - every function's code asset, handler string and environment as written in the template,
 *   in its own Node 22 process (host.ts).
 *
 * Only what has no engine here is substituted, and every substitution is listed in
 * `LOCAL_WORLD` and printed: KMS (the envelope key) by the local keyring, CloudHSM by a
 * SoftHSM2 token behind a stand-in layer that carries the real pkcs11js addon, the PIN's
 * Secrets Manager secret by the token's PIN, AWS endpoints by the local engines, and the
 * stage URL by the local address.
 */
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { localClient, startDynamoLocal, stopDynamoLocal, waitForDynamo } from '../dynamodb.js';
import { DEFAULT_TOKEN_LABEL, prepareSoftHsm, softHsmModule } from '../softhsm.js';
import { readAssembly, synthesizeArtifact } from './assembly.js';
import { LOCAL_CLUSTER_ID, type RecordedRequest, startCloudHsmControlPlane } from './cloudhsm-control-plane.js';
import { startSts } from './sts.js';
import { startBuckets } from './buckets.js';
import { ACCOUNT, BUILD_FILE, bucketsOf, type FunctionSpec, type MethodSpec, queuesOf, REGION, readDeployment, tablesOf } from './deployment.js';
import { startArtifactGateway } from './gateway.js';
import { FunctionHost } from './host.js';
import { decodeAwsRequest } from './aws-calls.js';
import { type Caller, callerFor, IamEvaluation, iamModel, mappingCalls, serviceCalls } from './iam.js';
import { startQueues, startSources } from './sources.js';
import { deployTable } from '../tables.js';
import { LOCAL_BILLING_CONTEXT, localBillingOverlay } from '../billing.js';
import { LOCAL_TOOLS_ENV } from '../tools.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** What replaces each AWS service that has no local engine, as printed at start. */
export const LOCAL_WORLD: readonly string[] = [
  'KMS envelope key -> local keyring file (KEY_PROVIDER=local)',
  'CloudHSM -> SoftHSM2 token; the HSM layer -> a stand-in layer with the real pkcs11js addon (layer functions take turns: the file token is not safe for concurrent writers)',
  'CloudHSM API (DescribeClusters) -> a local stand-in whose cluster has one HSM on 127.0.0.1; every request recorded',
  'Secrets Manager (HSM PIN) -> PKCS11_PIN of the SoftHSM2 token',
  'DynamoDB (and its stream) -> DynamoDB Local; SQS -> fauxqs; S3 buckets -> fauxqs (objects under DATA_DIR/s3); EventBridge schedules -> local timers',
  'API Gateway stage URL -> the local address (PUBLIC_BASE_URL)',
  "X-Ray -> off (POWERTOOLS_TRACE_ENABLED=false: no daemon); CloudWatch metrics -> EMF lines on the functions' stdout, off unless POWERTOOLS_METRICS_DISABLED=false",
  'Secrets Manager (payment provider) -> the local payment provider (PAYMENT_PROVIDER=local) and its secret file under DATA_DIR',
];

/** The CloudHSM context the local synth uses, so signing functions are wired as in a CloudHSM deployment. */
export function localHsmContext(workDir: string): Record<string, string> {
  const layer = join(workDir, 'hsm-layer');
  const target = join(layer, 'nodejs', 'node_modules', 'pkcs11js');
  mkdirSync(dirname(target), { recursive: true });
  cpSync(join(ROOT, 'node_modules', 'pkcs11js'), target, {
    recursive: true,
    filter: (src) => !src.includes(`${join('pkcs11js', 'build', 'Release', 'obj.target')}`),
  });
  return {
    hsmClusterId: LOCAL_CLUSTER_ID,
    hsmVpcId: 'vpc-0000000000000000a',
    hsmSubnetIds: 'subnet-0000000000000000a',
    hsmSecurityGroupId: 'sg-0000000000000000a',
    hsmLayerPath: layer,
    hsmLibraryPath: softHsmModule() ?? '/usr/lib/softhsm/libsofthsm2.so',
    hsmTokenLabel: DEFAULT_TOKEN_LABEL,
    hsmPinSecretArn: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:local-hsm-pin',
  };
}

export interface ArtifactRuntimeOptions {
  readonly port: number;
  readonly dataDir: string;
  readonly dynamoPort: number;
  readonly inMemory: boolean;
  /** A synthesized cloud assembly to serve instead of building and synthesizing now. */
  readonly assembly?: string;
  /** Extra CDK context for the synth (e.g. corsOrigins). */
  readonly context?: Record<string, unknown>;
  readonly log?: NodeJS.WritableStream;
  /**
   * Where the functions' coverage goes (`npm run coverage -- --project artifact`: ARTIFACT_COVERAGE_DIR): the bundles' source
   * maps (the synth) and each serving environment's raw V8 coverage (`v8/`), read by
   * scripts/coverage/artifact.ts.
   */
  readonly coverageDir?: string;
  /**
   * The tests' control server (ARTIFACT_CONTROL_FILE): where its address is written. It listens on
   * 127.0.0.1 only, and only when asked for: `POST /retire?method=GET&path=/api/v1/secrets` retires
   * the idle environments of that method's function as Lambda's shutdown would
   * (test/helpers/artifact.ts `retireEnvironments`).
   */
  readonly controlFile?: string;
}

export interface ArtifactReport {
  readonly assembly: string;
  readonly modules: { module: string; functionName: string; ok: boolean; error?: string }[];
  readonly methods: { method: string; handler?: string; statuses: Record<string, number> }[];
  readonly failures: { method: string; errorType: string; errorMessage: string }[];
  readonly initFailures: { functionName: string; handler: string; error: string }[];
  readonly sources: Record<string, { invocations: number; failures: number }>;
  readonly coldStarts: number;
  /** Environments ended with SIGTERM (their runtime registered an extension), and of those, the ones not exiting within 500 ms. */
  readonly shutdowns: { readonly terminated: number; readonly overBudget: number };
  /** Environments retired for room (memory or the ceiling), the most alive at once, and the ceiling. */
  readonly evictions: number;
  readonly peakEnvironments: number;
  readonly maxEnvironments: number;
  /** What the functions asked the CloudHSM API (the stand-in's record). */
  readonly cloudhsmRequests: readonly RecordedRequest[];
  /** The IAM evaluation tier (scripts/local/artifact/iam.ts): the classes of AWS calls evaluated (alike but for the UUIDs they name), those denied, requests not decoded. */
  readonly iam: {
    readonly requests: number;
    readonly evaluated: number;
    readonly denied: readonly { caller: string; call: unknown; reason: string }[];
    readonly undecoded: readonly { caller: string; error: string }[];
  };
}

export interface ArtifactRuntime {
  readonly url: string;
  readonly tableName: string;
  readonly importFailures: readonly { module: string; error: string }[];
  report(): Promise<ArtifactReport>;
  stop(): Promise<void>;
}

export async function startArtifactRuntime(opts: ArtifactRuntimeOptions): Promise<ArtifactRuntime> {
  const log = opts.log ?? process.stdout;
  const workDir = mkdtempSync(join(tmpdir(), 'secrets-api-artifact-'));
  // the bundles and cloud assembly (about 90 MB) go with the process however it ends: a start
  // that fails, or a signal before the runtime is up (scripts/local/start.ts exits at once), left them
  const removeWorkDir = () => rmSync(workDir, { recursive: true, force: true });
  process.once('exit', removeWorkDir);
  // the address printed, and the public base unless PUBLIC_BASE_URL says otherwise: a host name,
  // as scripts/local/start.ts says why (passkeys); the gateway listens on 127.0.0.1 only
  const url = `http://localhost:${opts.port}`;
  const publicBaseUrl = process.env.PUBLIC_BASE_URL ?? url;
  const assemblyDir =
    opts.assembly ??
    (await synthesizeArtifact(workDir, { ...localHsmContext(workDir), ...LOCAL_BILLING_CONTEXT, ...opts.context }, log, opts.coverageDir));
  const assembly = readAssembly(assemblyDir);
  // where the bundles were built, for the checks of the whole build (test/artifact/bundles.test.ts)
  if (!opts.assembly) {
    mkdirSync(opts.dataDir, { recursive: true });
    writeFileSync(join(opts.dataDir, BUILD_FILE), `${JSON.stringify({ lambda: join(workDir, 'lambda') })}\n`);
  }

  // DynamoDB Local with the tables as declared
  const endpoint = `http://127.0.0.1:${opts.dynamoPort}`;
  log.write(`[start] starting DynamoDB Local on port ${opts.dynamoPort}\n`); // the steps: scripts/local/start.ts
  const dynamo = startDynamoLocal({ port: opts.dynamoPort, ...(opts.inMemory ? {} : { dataDir: join(opts.dataDir, 'dynamodb') }) });
  await waitForDynamo(endpoint, undefined, dynamo);
  const tables = new Map<string, string>();
  for (const table of tablesOf(assembly)) {
    // LOCAL_TABLE_NAME: the name a caller chose (the test setup, which tells its test files before the start)
    const name = process.env.LOCAL_TABLE_NAME || String(table.properties.TableName ?? table.key.replace(/[^A-Za-z0-9_.-]+/g, '-').slice(-255));
    const where = opts.inMemory ? 'DynamoDB Local (in memory)' : join(opts.dataDir, 'dynamodb');
    const outcome = await deployTable(localClient(endpoint), name, table.properties, where);
    if (outcome !== 'created') log.write(`[start] ${outcome} the table ${name}, with its data (${where})\n`);
    tables.set(table.key, name);
  }
  if (tables.size !== 1) throw new Error(`expected the one table of the data stack, found ${tables.size}`);
  const tableName = [...tables.values()][0]!;

  const queues = await startQueues(queuesOf(assembly));
  const buckets = await startBuckets(bucketsOf(assembly), opts.dataDir);
  const world = { tables, queues: queues.urls, buckets: buckets.names };
  const deployment = readDeployment(assembly, world);

  // the IAM evaluation tier: every AWS call of every function, against the role that signed it
  const model = iamModel(assembly, world);
  const iam = new IamEvaluation(model);
  const callers = new Map<string, Caller>();
  const callerOf = (fn: FunctionSpec): Caller => {
    let caller = callers.get(fn.key);
    if (!caller) callers.set(fn.key, (caller = callerFor(deployment, fn)));
    return caller;
  };

  // the local keyring (the envelope key's stand-in) and the SoftHSM2 token (CloudHSM's)
  const masterKeyFile = join(opts.dataDir, 'keyring', 'master.key');
  const softhsm = prepareSoftHsm(opts.dataDir);
  const controlPlane = await startCloudHsmControlPlane();
  // tenant routes assume their tenant-access role per account (lib/tenancy): only those roles
  const tenantRoles = new Set(
    [...deployment.functions.values()].map((f) => f.environment.TENANT_ROLE_ARN).filter((a): a is string => typeof a === 'string'),
  );
  const sts = await startSts((arn) => tenantRoles.has(arn));
  log.write(`artifact: ${deployment.functions.size} functions, ${deployment.methods.length} methods from ${assemblyDir}\n`);
  for (const line of LOCAL_WORLD) log.write(`artifact: local world: ${line}\n`);
  if (!softhsm.ok) log.write(`artifact: SoftHSM2 unavailable (${softhsm.reason}); signing answers 503\n`);

  const overlay = (fn: FunctionSpec): Record<string, string | undefined> => ({
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_SESSION_TOKEN: undefined,
    DYNAMODB_ENDPOINT: endpoint,
    AWS_ENDPOINT_URL_SQS: queues.endpoint,
    KEY_PROVIDER: 'local',
    KMS_KEY_ID: undefined,
    LOCAL_MASTER_KEY_FILE: masterKeyFile,
    ...(fn.environment.TENANT_ROLE_ARN ? { STS_ENDPOINT: sts.endpoint } : {}),
    PUBLIC_BASE_URL: publicBaseUrl,
    // no X-Ray daemon here; metrics (EMF on stdout) only when asked for (POWERTOOLS_METRICS_DISABLED=false)
    POWERTOOLS_TRACE_ENABLED: 'false',
    POWERTOOLS_METRICS_DISABLED: process.env.POWERTOOLS_METRICS_DISABLED ?? 'true',
    // the development settings of the source runtime (scripts/local/start.ts, events.ts)
    ACME_ALLOW_LOOPBACK: '1',
    DATABASE_ALLOW_LOOPBACK: '1',
    WEBHOOKS_ALLOW_LOOPBACK: '1',
    WEBHOOK_RETRY_BASE_MS: '400',
    WEBHOOK_RETRY_MAX_MS: '5000',
    WEBHOOK_TIMEOUT_MS: '5000',
    ...localBillingOverlay(fn.environment, opts.dataDir),
    ...buckets.overlay(fn.environment),
    ...Object.fromEntries(LOCAL_TOOLS_ENV.map((k) => [k, process.env[k]])), // scripts/local/tools.ts
    ...(fn.environment.CLOUDHSM_CLUSTER_ID
      ? { CLOUDHSM_ENDPOINT: controlPlane.endpoint, CLOUDHSM_CLIENT_CONFIG: join(opts.dataDir, 'cloudhsm', 'cloudhsm-pkcs11.cfg') }
      : {}),
    ...(fn.environment.PKCS11_MODULE
      ? softhsm.ok
        ? { SOFTHSM2_CONF: softhsm.token.conf, PKCS11_MODULE: softhsm.token.module, PKCS11_PIN: softhsm.token.pin, PKCS11_PIN_SECRET_ID: undefined }
        : { PKCS11_MODULE: undefined, PKCS11_PIN_SECRET_ID: undefined }
      : {}),
  });
  // SoftHSM2 keeps its token in files that several processes writing at once can corrupt
  // (CloudHSM serves concurrent clients): functions with the HSM layer take turns here.
  const functions = new FunctionHost({
    overlay,
    log,
    ...(opts.coverageDir ? { coverageDir: join(opts.coverageDir, 'v8') } : {}),
    lane: (fn) => (fn.layerDirs.length > 0 ? 'softhsm-token' : undefined),
    // ARTIFACT_INVOCATION_TRACE=<file>: a line per invocation (ms, function, cold or warm), to
    // measure what another environment cap or eviction would cost (scripts/bench/environments.ts)
    ...(process.env.ARTIFACT_INVOCATION_TRACE
      ? {
          onInvoke: (fn: FunctionSpec, cold: boolean) =>
            appendFileSync(process.env.ARTIFACT_INVOCATION_TRACE!, `${Date.now()} ${fn.key} ${cold ? 'cold' : 'warm'}\n`),
        }
      : {}),
    onAwsRequest: (fn, request) => {
      iam.requests++;
      try {
        // the local keyring's stand-in KMS requests name no key: the template's KMS_KEY_ID
        const keyed =
          request.headers['x-amz-target']?.startsWith('TrentService.') && JSON.parse(request.body || '{}').KeyId === ''
            ? { ...request, body: JSON.stringify({ ...JSON.parse(request.body), KeyId: fn.environment.KMS_KEY_ID ?? '' }) }
            : request;
        const calls = decodeAwsRequest(keyed, model);
        // ARTIFACT_AWS_TRACE=<file>: a line per AWS request a function makes ("function action"),
        // to see where a run's requests to DynamoDB Local, the queues and STS come from
        if (process.env.ARTIFACT_AWS_TRACE) appendFileSync(process.env.ARTIFACT_AWS_TRACE, calls.map((c) => `${fn.key} ${c.action}\n`).join(''));
        for (const call of calls) for (const c of [call, ...serviceCalls(model, call)]) iam.record(callerOf(fn), c);
      } catch (error) {
        iam.undecoded.push({ caller: callerOf(fn).name, error: (error as Error).message });
      }
    },
  });

  // the first operator, with this process's copy of the library, before any function runs
  Object.assign(process.env, {
    TABLE_NAME: tableName,
    DYNAMODB_ENDPOINT: endpoint,
    KEY_PROVIDER: 'local',
    LOCAL_MASTER_KEY_FILE: masterKeyFile,
    AWS_REGION: 'us-east-1',
  });
  const { seedRoot } = await import('../seed.js');
  const root = await seedRoot(process.env.SECRETS_DEV_ROOT_KEY || undefined);

  // every code asset imports under Node 22 in a fresh process, or the runtime says which does not
  log.write(`[start] importing each of the ${deployment.functions.size} functions' modules in a fresh Node 22 process\n`);
  const modules = await verifyImports(functions, [...deployment.functions.values()]);
  const importFailures = modules.filter((m) => !m.ok).map((m) => ({ module: m.module, error: m.error! }));

  // what Lambda itself does with each mapped function's execution role
  for (const source of deployment.eventSources.filter((s) => s.enabled)) {
    const fn = deployment.functions.get(source.functionKey)!;
    const url = queues.urls.get(source.queueKey)!;
    const queueArn = `arn:aws:sqs:${REGION}:${ACCOUNT}:${url.slice(url.lastIndexOf('/') + 1)}`;
    for (const call of mappingCalls(model, { kind: 'sqs', queueArn })) iam.record(callerOf(fn), call);
  }
  for (const source of deployment.streamSources.filter((s) => s.enabled)) {
    const fn = deployment.functions.get(source.functionKey)!;
    const streamArn = `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${source.tableName}/stream/local`;
    for (const call of mappingCalls(model, { kind: 'stream', streamArn })) iam.record(callerOf(fn), call);
  }

  const gateway = await startArtifactGateway({ port: opts.port, deployment, functions, log });
  const control = opts.controlFile ? await startControl(opts.controlFile, deployment.methods, functions) : undefined;
  const sources = startSources({ deployment, queues, dynamoEndpoint: endpoint, functions, log });
  if (root && !process.env.SECRETS_DEV_ROOT_KEY) log.write(`generated platform-operator root key (shown once, keep it):\n  ${root.key}\n`);

  return {
    url,
    tableName,
    importFailures,
    async report() {
      await iam.settled();
      log.write(
        `artifact: IAM evaluation: ${iam.requests} AWS requests recorded, ${iam.evaluated} classes of calls evaluated (alike but for the UUIDs they name), ${iam.denied.length} denied, ${iam.undecoded.length} not decoded\n`,
      );
      return {
        assembly: assemblyDir,
        modules,
        methods: [...gateway.stats.entries()].map(([method, s]) => ({
          method,
          ...(s.method.functionKey ? { handler: deployment.functions.get(s.method.functionKey)?.handler } : {}),
          statuses: Object.fromEntries(s.statuses),
        })),
        failures: gateway.failures,
        initFailures: functions.initFailures.map((f) => ({
          functionName: f.functionName,
          handler: f.handler,
          error: `${f.error.errorType}: ${f.error.errorMessage}`,
        })),
        sources: Object.fromEntries(sources.counts),
        coldStarts: functions.coldStarts,
        shutdowns: { ...functions.shutdowns },
        evictions: functions.evictions,
        peakEnvironments: functions.peakEnvironments,
        maxEnvironments: functions.maxEnvironments,
        cloudhsmRequests: [...controlPlane.requests],
        iam: { requests: iam.requests, evaluated: iam.evaluated, denied: [...iam.denied], undecoded: [...iam.undecoded] },
      };
    },
    async stop() {
      control?.close();
      gateway.server.close();
      gateway.server.closeAllConnections();
      await sources.stop();
      await functions.close();
      await queues.stop();
      await buckets.stop();
      await controlPlane.stop();
      await sts.close();
      await stopDynamoLocal(dynamo);
      process.off('exit', removeWorkDir);
      removeWorkDir();
    },
  };
}

async function startControl(file: string, methods: readonly MethodSpec[], functions: FunctionHost): Promise<Server> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://control');
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'POST' || url.pathname !== '/retire') return answer(404, { error: 'POST /retire?method=&path=' });
    const method = methods.find((m) => m.httpMethod === url.searchParams.get('method') && m.path === url.searchParams.get('path'));
    if (!method?.functionKey) return answer(404, { error: `no function serves ${url.searchParams.get('method')} ${url.searchParams.get('path')}` });
    functions.retireIdle(method.functionKey).then(
      (r) => answer(200, r),
      (error: unknown) => answer(500, { error: (error as Error).message }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  writeFileSync(file, `${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
  return server;
}

/** Starts one environment per code asset and handler module, two at a time, kept for its function's first invocation; reports each. */
async function verifyImports(functions: FunctionHost, specs: readonly FunctionSpec[]): Promise<ArtifactReport['modules']> {
  const byModule = new Map<string, FunctionSpec>();
  for (const fn of specs) {
    const module = `${fn.codeDir}:${fn.handler.slice(0, fn.handler.lastIndexOf('.'))}`;
    if (!byModule.has(module)) byModule.set(module, fn);
  }
  const queue = [...byModule.values()];
  const results: ArtifactReport['modules'] = [];
  const worker = async () => {
    for (let fn = queue.shift(); fn; fn = queue.shift()) {
      const error = await functions.prewarm(fn);
      results.push({
        module: fn.handler.slice(0, fn.handler.lastIndexOf('.')),
        functionName: fn.functionName,
        ok: !error,
        ...(error ? { error: `${error.errorType}: ${error.errorMessage}` } : {}),
      });
    }
  };
  await Promise.all([worker(), worker()]);
  return results.sort((a, b) => a.module.localeCompare(b.module));
}

/** Writes the report where the test setup reads it. */
export function writeReport(file: string, report: ArtifactReport): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
}

export const readReport = (file: string): ArtifactReport => JSON.parse(readFileSync(file, 'utf8')) as ArtifactReport;

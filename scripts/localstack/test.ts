/**
 * `npm run test:localstack`: deploys the CDK app into LocalStack with cdklocal and
 * smoke-tests the deployed API through LocalStack's API Gateway and Lambda. Optional and not
 * part of `npm test`: it needs a Docker engine (LocalStack runs in a container, and runs
 * each Lambda function in a container of its own).
 *
 * - Default: starts LocalStack with @testcontainers/localstack (image LOCALSTACK_IMAGE,
 *   default below; LOCALSTACK_AUTH_TOKEN is passed through when set) and stops it at the end.
 * - LOCALSTACK_ENDPOINT=http://localhost:4566: uses a LocalStack that is already running
 *   (`localstack start`, docker compose) instead.
 * - Without a Docker engine (and no LOCALSTACK_ENDPOINT) it says why it did not run and
 *   exits 1: a run that tested nothing must not look like a pass.
 *
 * Steps: the preflight (scripts/localstack/preflight.ts: cdklocal's environment rule, and an
 * HTTP answer at the endpoint, said in one line otherwise); cdklocal bootstrap; cdklocal deploy --all (context name=lsapi, outputs to a file);
 * the first operator with scripts/operator/create.ts --stack lsapi-data; then over HTTP:
 * GET /health, 401 without a key, and a secret written and read back with the operator's key.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { LocalstackContainer, type StartedLocalStackContainer } from '@testcontainers/localstack';
import { main as createOperator } from '../operator/create.js';
import { cdklocalEnvironment, endpointProblem } from './preflight.js';

const IMAGE = process.env.LOCALSTACK_IMAGE ?? 'localstack/localstack:4.7.0';
const NAME = 'lsapi';
const REGION = 'us-east-1';
const ACCOUNT = '000000000000';
const ROOT = resolve(import.meta.dirname, '../..');

const log = (line: string) => process.stderr.write(`${line}\n`);

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  log(`$ ${cmd} ${args.join(' ')}`);
  return new Promise((ok, fail) => {
    const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', fail);
    child.on('exit', (code) => (code === 0 ? ok() : fail(new Error(`${cmd} ${args[0]} exited with ${code}`))));
  });
}

/** Starts LocalStack in Docker; null with the reason when there is no Docker engine. */
async function startLocalStack(): Promise<{ container: StartedLocalStackContainer } | { reason: string }> {
  const container = new LocalstackContainer(IMAGE)
    // LocalStack runs Lambda functions as sibling containers through the engine's socket
    .withBindMounts([{ source: '/var/run/docker.sock', target: '/var/run/docker.sock' }])
    .withEnvironment({
      // the functions are arm64 (infra/route-function.ts); run them on an x86 host too
      LAMBDA_IGNORE_ARCHITECTURE: '1',
      SERVICES: 'cloudformation,iam,sts,ssm,s3,ecr,lambda,apigateway,dynamodb,kms,sqs,sns,events,logs,cloudwatch,secretsmanager',
      ...(process.env.LOCALSTACK_AUTH_TOKEN ? { LOCALSTACK_AUTH_TOKEN: process.env.LOCALSTACK_AUTH_TOKEN } : {}),
    });
  try {
    return { container: await container.start() };
  } catch (error) {
    const message = (error as Error).message;
    if (/container runtime strategy|docker\.sock|ECONNREFUSED|ENOENT/i.test(message)) return { reason: message };
    throw error;
  }
}

interface Check {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
}

async function smoke(endpoint: string): Promise<Check[]> {
  const outDir = mkdtempSync(join(tmpdir(), 'secrets-api-localstack-'));
  const outputsFile = join(outDir, 'outputs.json');
  const env: NodeJS.ProcessEnv = { ...process.env, ...cdklocalEnvironment(endpoint, ACCOUNT, REGION) };
  try {
    const cdklocal = join(ROOT, 'node_modules', '.bin', 'cdklocal');
    await run(cdklocal, ['bootstrap', `aws://${ACCOUNT}/${REGION}`], env);
    await run(cdklocal, ['deploy', '--all', '--require-approval', 'never', '-c', `name=${NAME}`, '--outputs-file', outputsFile], env);
    const outputs = JSON.parse(readFileSync(outputsFile, 'utf8')) as Record<string, Record<string, string>>;
    const api = outputs[`${NAME}-api`] ?? {};
    if (!api.RestApiId) throw new Error(`the deployment has no RestApiId output: ${JSON.stringify(outputs)}`);
    // LocalStack serves a stage at <endpoint>/_aws/execute-api/<api id>/<stage>
    const base = `${endpoint}/_aws/execute-api/${api.RestApiId}/prod`;

    const lines: string[] = [];
    const code = await createOperator(['--stack', `${NAME}-data`, '--region', REGION, '--endpoint', endpoint], {
      out: (l) => lines.push(l),
      err: log,
    });
    if (code !== 0 || lines.length !== 1) throw new Error(`operator:create exited with ${code}`);
    const key = lines[0]!;

    const checks: Check[] = [];
    const call = async (method: string, path: string, opts: { key?: string; body?: unknown } = {}) => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: {
          ...(opts.key ? { authorization: `Bearer ${opts.key}` } : {}),
          ...(opts.body ? { 'content-type': 'application/json' } : {}),
        },
        body: opts.body ? JSON.stringify(opts.body) : undefined,
      });
      return { status: res.status, body: (await res.json().catch(() => null)) as Record<string, unknown> | null };
    };
    const check = (name: string, ok: boolean, detail: unknown) => checks.push({ name, ok, detail: JSON.stringify(detail) });

    const health = await call('GET', '/health');
    check('GET /health answers 200', health.status === 200, health);
    const anonymous = await call('GET', '/api/v1/secrets');
    check('GET /api/v1/secrets without a key answers 401', anonymous.status === 401 && typeof anonymous.body?.error === 'string', anonymous);
    const value = `localstack-${Date.now()}`;
    const created = await call('POST', '/api/v1/secrets', { key, body: { name: 'localstack-smoke', data: { value } } });
    check('POST /api/v1/secrets with the operator key answers 201', created.status === 201, { status: created.status, error: created.body?.error });
    const read = await call('GET', '/api/v1/secrets/localstack-smoke', { key });
    check('GET /api/v1/secrets/{name} returns the value written', read.status === 200 && JSON.stringify(read.body).includes(value), {
      status: read.status,
      error: read.body?.error,
    });
    return checks;
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

async function mainLocalStack(): Promise<number> {
  let container: StartedLocalStackContainer | undefined;
  let endpoint = process.env.LOCALSTACK_ENDPOINT;
  if (!endpoint) {
    const started = await startLocalStack();
    if ('reason' in started) {
      log(
        'test:localstack did NOT run: no Docker engine answered, and LocalStack needs one (it runs in a container and runs each\n' +
          `Lambda function in a container of its own). testcontainers said: ${started.reason.split('\n')[0]}\n` +
          'Start Docker (or point LOCALSTACK_ENDPOINT at a running LocalStack) and run it again. docs/deployment.md, "LocalStack".',
      );
      return 1;
    }
    container = started.container;
    endpoint = container.getConnectionUri();
  }
  log(`LocalStack at ${endpoint}`);
  // before the minutes of bootstrap and deploy: the environment cdklocal will get, and an answer at the endpoint
  const problem = await endpointProblem({ ...process.env, ...cdklocalEnvironment(endpoint, ACCOUNT, REGION) });
  if (problem) {
    log(`test:localstack did NOT run: ${problem}`);
    await container?.stop();
    return 1;
  }
  try {
    const checks = await smoke(endpoint);
    for (const c of checks) log(`${c.ok ? 'ok  ' : 'FAIL'} ${c.name}${c.ok ? '' : `: ${c.detail}`}`);
    const failed = checks.filter((c) => !c.ok).length;
    process.stdout.write(`${checks.length - failed} passed, ${failed} failed\n`);
    return failed === 0 ? 0 : 1;
  } finally {
    await container?.stop();
  }
}

process.exitCode = await mainLocalStack().catch((error: unknown) => {
  log(`test:localstack failed: ${(error as Error).message}`);
  return 1;
});

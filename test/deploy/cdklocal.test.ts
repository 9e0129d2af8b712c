import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MOTO_ACCOUNT, MOTO_REGION, type MotoServer, motoUnavailable, startMoto } from '../../scripts/deploy/moto.js';
import { freePort } from '../../scripts/local/ports.js';
import { cdklocalEnvironment, endpointProblem } from '../../scripts/localstack/preflight.js';

/**
 * The LocalStack path, correct by construction (issue 35): `cdklocal` with the environment
 * docs/deployment.md documents (scripts/localstack/preflight.ts cdklocalEnvironment), driven
 * against moto on loopback instead of LocalStack (which needs Docker). A full bootstrap takes
 * minutes; a bootstrap with a one-resource template takes seconds and proves what went wrong
 * before: cdklocal accepts the variables, resolves the account through STS at the endpoint,
 * and creates a stack through CloudFormation there. moto's account is 123456789012 where
 * LocalStack's is 000000000000: the only difference, passed as the account.
 */
const unavailable = motoUnavailable();
const CDKLOCAL = resolve('node_modules/.bin/cdklocal');

function cdklocal(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((ok) => {
    // what the shell has set is not what the test checks: only PATH and HOME come from outside
    const child = spawn(CDKLOCAL, args, { cwd, env: { PATH: process.env.PATH, HOME: process.env.HOME, CDK_DISABLE_VERSION_CHECK: '1', ...env } });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('exit', (code) => ok({ code, output }));
  });
}

/** A bootstrap template of one resource with the output the toolkit reads. */
function tinyBootstrapTemplate(dir: string): string {
  const file = join(dir, 'bootstrap.yaml');
  writeFileSync(
    file,
    [
      'Resources:',
      '  Version:',
      '    Type: AWS::SSM::Parameter',
      '    Properties: { Name: /cdk-bootstrap/cdklocal-check/version, Type: String, Value: "1" }',
      'Outputs:',
      '  BootstrapVersion:',
      '    Value: { "Fn::GetAtt": [Version, Value] }',
      '',
    ].join('\n'),
  );
  return file;
}

describe.skipIf(unavailable !== undefined)(`cdklocal with the documented environment, against moto${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  let moto: MotoServer;
  // made here, not when the file is collected: a skipped run leaves nothing behind
  let cwd: string;
  beforeAll(async () => {
    cwd = mkdtempSync(join(tmpdir(), 'cdklocal-check-'));
    moto = await startMoto();
  });
  afterAll(async () => {
    await moto?.stop();
    rmSync(cwd, { recursive: true, force: true });
  });

  it('the preflight accepts the documented environment at a live endpoint, and says in one line what is missing or not answering', async () => {
    expect(await endpointProblem(cdklocalEnvironment(moto.endpoint, MOTO_ACCOUNT))).toBeUndefined();
    const withoutS3 = await endpointProblem({ AWS_ENDPOINT_URL: moto.endpoint });
    expect(withoutS3).toMatch(/AWS_ENDPOINT_URL_S3/);
    expect(withoutS3).not.toContain('\n');
    const closed = `http://127.0.0.1:${await freePort()}`;
    expect(await endpointProblem(cdklocalEnvironment(closed))).toMatch(new RegExp(`^nothing answers at ${closed} `));
  });

  it('cdklocal refuses AWS_ENDPOINT_URL without AWS_ENDPOINT_URL_S3 (what the preflight catches first)', async () => {
    const run = await cdklocal(['bootstrap', '--show-template'], { AWS_ENDPOINT_URL: moto.endpoint }, cwd);
    expect(run.code).not.toBe(0);
    expect(run.output).toContain("'AWS_ENDPOINT_URL_S3' must be specified");
  });

  it('cdklocal bootstraps a stack at the endpoint with the documented environment', async () => {
    const env = cdklocalEnvironment(moto.endpoint, MOTO_ACCOUNT, MOTO_REGION);
    const run = await cdklocal(
      ['bootstrap', `aws://${MOTO_ACCOUNT}/${MOTO_REGION}`, '--template', tinyBootstrapTemplate(cwd), '--toolkit-stack-name', 'CdklocalCheck'],
      env,
      cwd,
    );
    expect(run.output).not.toMatch(/Unable to resolve AWS account/);
    expect(run.code, run.output.slice(-2000)).toBe(0);
    expect(run.output).toMatch(/Environment aws:\/\/123456789012\/us-east-1 bootstrapped/);
  });
});

import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { DataStack } from '../../infra/data-stack.js';
import { readSettings } from '../../infra/settings.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { API_KEY_RE, hashApiKey } from '../../lib/auth/api-keys.js';
import { authenticateBearer } from '../../lib/authn/authenticate.js';
import { ADMIN_SCOPE } from '../../lib/auth/scopes.js';
import { commitOperatorAccount, OperatorExists, operatorAccountItems } from '../../lib/operator/accounts.js';
import { getTenant } from '../../lib/store/tenants.js';
import { ensureTable, localClient } from '../../scripts/local/dynamodb.js';
import { main } from '../../scripts/operator/create.js';

/**
 * `npm run operator:create` (scripts/operator/create.ts) against DynamoDB Local (the one the
 * suite's global setup started), each case on a table of its own. The command runs as a
 * child process, as a deployer runs it, except for the --stack case, which runs in this
 * process so that only the CloudFormation client is mocked (CloudFormation has no local
 * engine here) and its exact DescribeStacks request is asserted; the table it names is
 * real. The printed key is then checked by lib/auth's own authentication against that table.
 */

const endpoint = inject('dynamoEndpoint');
const exec = promisify(execFile);
const tableOf = (what: string) => `opcreate-${what}-${randomBytes(4).toString('hex')}`;

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, ['--import', 'tsx', resolve('scripts/operator/create.ts'), ...args], {
      env: { ...process.env, NODE_NO_WARNINGS: '1' },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

async function scan(table: string): Promise<Record<string, unknown>[]> {
  const out = await DynamoDBDocumentClient.from(localClient(endpoint)).send(new ScanCommand({ TableName: table, ConsistentRead: true }));
  return out.Items ?? [];
}

const operatorTenants = async (table: string) => (await scan(table)).filter((i) => i.sk === 'TENANT' && i.operator === true);

/** In-process calls to lib/ go to this table: the --stack case points lib/config.ts at it. */
const STACK_TABLE = tableOf('stack');
const cfn = mockClient(CloudFormationClient);

describe('npm run operator:create', () => {
  let stackKey: string;
  let stackTenant: string;

  beforeAll(async () => {
    await ensureTable(endpoint, STACK_TABLE);
    cfn.on(DescribeStacksCommand, { StackName: 'ops-test-data' }).resolves({
      Stacks: [
        {
          StackName: 'ops-test-data',
          StackStatus: 'CREATE_COMPLETE',
          CreationTime: new Date(),
          Outputs: [
            { OutputKey: 'TableName', OutputValue: STACK_TABLE },
            { OutputKey: 'EnvelopeKeyArn', OutputValue: 'arn:aws:kms:eu-west-1:111122223333:key/0b1c2d3e-aaaa-bbbb-cccc-1234567890ab' },
          ],
        },
      ],
    });
    // the one in-process run, so lib/config.ts (read once) is configured by the command itself
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(['--stack', 'ops-test-data', '--region', 'eu-west-1', '--endpoint', endpoint, '--name', 'Ops', '--email', 'ops@example.com'], {
      out: (l) => out.push(l),
      err: (l) => err.push(l),
    });
    expect(code, err.join('\n')).toBe(0);
    expect(out).toHaveLength(1);
    stackKey = out[0]!;
    stackTenant = /account ([0-9a-f-]{36})/.exec(err.join('\n'))![1]!;
  });

  afterAll(() => {
    cfn.restore();
  });

  it('the data stack outputs what --stack reads: TableName (its table) and EnvelopeKeyArn (its KMS key)', () => {
    const app = new App();
    const stack = new DataStack(app, 'ops-test-data', { settings: readSettings(app.node) });
    const template = Template.fromStack(stack);
    const logicalId = (type: string) => Object.keys(template.findResources(type))[0]!;
    template.hasOutput('TableName', { Value: { Ref: logicalId('AWS::DynamoDB::Table') } });
    template.hasOutput('EnvelopeKeyArn', { Value: { 'Fn::GetAtt': [logicalId('AWS::KMS::Key'), 'Arn'] } });
  });

  it('--stack reads the table from the data stack with exactly one DescribeStacks {StackName} in the given region', async () => {
    const calls = cfn.commandCalls(DescribeStacksCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.args[0].input).toEqual({ StackName: 'ops-test-data' });
    expect(cfn.calls()).toHaveLength(1); // nothing else asked of CloudFormation
    const client = calls[0]!.thisValue as CloudFormationClient;
    expect(await client.config.region()).toBe('eu-west-1');
    expect(process.env.TABLE_NAME).toBe(STACK_TABLE);
    expect(process.env.KMS_KEY_ID).toBe('arn:aws:kms:eu-west-1:111122223333:key/0b1c2d3e-aaaa-bbbb-cccc-1234567890ab');
  });

  it('prints a key that authenticates as a platform operator of the stack table, whose tenant is an operator account', async () => {
    expect(stackKey).toMatch(API_KEY_RE);
    const principal = await authenticateBearer({ Authorization: `Bearer ${stackKey}` });
    expect(principal).toMatchObject({ kind: 'api_key', tenantId: stackTenant, operator: true, user: 'ops@example.com' });
    expect(principal.scopes).toEqual([ADMIN_SCOPE]);
    expect(await getTenant(stackTenant)).toMatchObject({ name: 'Ops', admin_email: 'ops@example.com', operator: true, status: 'active' });
    await expect(authenticateBearer({ Authorization: `Bearer ${stackKey.slice(0, -1)}${stackKey.endsWith('A') ? 'B' : 'A'}` })).rejects.toMatchObject({
      status: 401,
    });
  });

  it('stores only the hash: no item holds the key or its secret part, the auth item is keyed by its SHA-256', async () => {
    const items = await scan(STACK_TABLE);
    const text = JSON.stringify(items);
    expect(text).not.toContain(stackKey);
    expect(text).not.toContain(stackKey.slice(13)); // the 43-character secret after scm_<prefix>_
    expect(items.map((i) => i.pk)).toContain(`KEY#${hashApiKey(stackKey)}`);
    // the account, its admin user, key metadata and auth item, counters, audit entry, outbox event, the operator mark
    expect(items.map((i) => String(i.sk).replace(/#.*/, '')).sort()).toEqual(['APIKEY', 'AUDIT', 'COUNTERS', 'KEY', 'OPERATOR', 'OUTBOX', 'TENANT', 'USER']);
  });

  it('refuses a second run with a non-zero exit and a clear message, printing no key and writing nothing', async () => {
    const before = await scan(STACK_TABLE);
    const run = await cli(['--table', STACK_TABLE, '--endpoint', endpoint, '--region', 'us-east-1']);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`refused: table ${STACK_TABLE} (us-east-1) already has a platform operator (account ${stackTenant})`);
    expect(run.stderr).toContain('--force');
    expect(await scan(STACK_TABLE)).toHaveLength(before.length);
  });

  it('--force creates another operator account whose key works too; the first one keeps working', async () => {
    const run = await cli(['--table', STACK_TABLE, '--endpoint', endpoint, '--force', '--name', 'Second operator']);
    expect(run.code, run.stderr).toBe(0);
    const key = run.stdout.trim();
    expect(run.stdout).toBe(`${key}\n`); // stdout is the key alone, once
    expect(key).toMatch(API_KEY_RE);
    expect(run.stderr).not.toContain(key);
    const second = await authenticateBearer({ Authorization: `Bearer ${key}` });
    expect(second.operator).toBe(true);
    expect(second.tenantId).not.toBe(stackTenant);
    expect((await authenticateBearer({ Authorization: `Bearer ${stackKey}` })).tenantId).toBe(stackTenant);
    expect((await operatorTenants(STACK_TABLE)).map((t) => t.id).sort()).toEqual([stackTenant, second.tenantId].sort());
    expect(JSON.stringify(await scan(STACK_TABLE))).not.toContain(key);
    expect((await scan(STACK_TABLE)).find((i) => i.sk === 'OPERATOR')?.tenant_ids).toEqual([stackTenant, second.tenantId]);
  });

  it('of two runs prepared while no operator existed, only the first commits: the mark is a conditional write', async () => {
    const table = tableOf('race');
    await ensureTable(endpoint, table);
    const previous = process.env.TABLE_NAME;
    // lib/config.ts was read once, for STACK_TABLE: prepare against a fresh table by
    // swapping the TableName of the prepared items (the same items, another table)
    const retarget = (p: ReturnType<typeof operatorAccountItems>) => {
      for (const item of p.items) for (const op of Object.values(item)) if (op && 'TableName' in op) op.TableName = table;
      return p;
    };
    const a = retarget(operatorAccountItems({ name: 'A', admin_email: 'a@example.com' }, { actor: 'test' }));
    const b = retarget(operatorAccountItems({ name: 'B', admin_email: 'b@example.com' }, { actor: 'test' }));
    await commitOperatorAccount(a);
    await expect(commitOperatorAccount(b)).rejects.toBeInstanceOf(OperatorExists);
    expect((await operatorTenants(table)).map((t) => t.name)).toEqual(['A']);
    expect(process.env.TABLE_NAME).toBe(previous);
  });

  it('two concurrent runs on an empty table: exactly one creates an operator, the other is refused', async () => {
    const table = tableOf('concurrent');
    await ensureTable(endpoint, table);
    const runs = await Promise.all([cli(['--table', table, '--endpoint', endpoint]), cli(['--table', table, '--endpoint', endpoint])]);
    expect(runs.map((r) => r.code).sort(), runs.map((r) => r.stderr).join('\n')).toEqual([0, 1]);
    expect(runs.find((r) => r.code === 1)!.stderr).toContain('refused:');
    expect(await operatorTenants(table)).toHaveLength(1);
  });

  it('bad usage exits 2 with the usage line and touches nothing', async () => {
    for (const args of [[], ['--stack', 'a', '--table', 'b'], ['--table', 't', '--email', 'not-an-email'], ['--table', 't', '--bogus']]) {
      const run = await cli(args);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain('usage: npm run -s operator:create');
    }
  });

  it('a stack without the TableName output, or no stack at all, is a clear error (exit 2)', async () => {
    cfn.on(DescribeStacksCommand, { StackName: 'ops-test-api' }).resolves({ Stacks: [{ StackName: 'ops-test-api', StackStatus: 'CREATE_COMPLETE', CreationTime: new Date(), Outputs: [{ OutputKey: 'ApiUrl', OutputValue: 'https://x' }] }] });
    cfn.on(DescribeStacksCommand, { StackName: 'nope' }).rejects(Object.assign(new Error('Stack with id nope does not exist'), { name: 'ValidationError' }));
    const err: string[] = [];
    const io = { out: (l: string) => err.push(`stdout: ${l}`), err: (l: string) => err.push(l) };
    expect(await main(['--stack', 'ops-test-api', '--region', 'eu-west-1'], io)).toBe(2);
    expect(err.join('\n')).toContain('stack "ops-test-api" has no TableName output');
    expect(await main(['--stack', 'nope', '--region', 'eu-west-1'], io)).toBe(2);
    expect(err.join('\n')).toContain('stack "nope" not found in eu-west-1');
    expect(err.join('\n')).not.toContain('stdout:');
  });
});

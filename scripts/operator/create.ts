/**
 * `npm run -s operator:create -- --stack <data stack> [--region r] [--name n] [--email e] [--force]`
 *
 * First access to a deployment: creates a platform-operator account with one admin API key
 * in the deployment's table, with the caller's own AWS credentials (the deployer's, after
 * `cdk deploy`). Nothing can do this through the API, since creating an account needs an
 * operator. The table comes from the data stack's `TableName` output (DescribeStacks).
 *
 * - The key is written to stdout once, alone on its line (`KEY=$(npm run -s operator:create …)`);
 *   everything else goes to stderr. The table holds only its SHA-256; the key never enters a
 *   template, a parameter or a log.
 * - Refuses (exit 1) when an operator exists, unless --force; the write is conditional
 *   (lib/operator/accounts.ts), so of two concurrent runs only one creates the operator.
 * - --endpoint sends every AWS call to that endpoint (LocalStack, or DynamoDB Local with
 *   --table), with dummy credentials; --table names the table directly, without a stack.
 */
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { CloudFormationClient, DescribeStacksCommand, type Stack } from '@aws-sdk/client-cloudformation';
import { Email, Name } from '../../lib/account/schemas.js';

export const USAGE = [
  'usage: npm run -s operator:create -- --stack <data stack> [--region <region>] [--name <account name>] [--email <admin e-mail>] [--force]',
  '       npm run -s operator:create -- --table <table> [--endpoint <url>] [--region <region>] [...]   (no CloudFormation: DynamoDB Local)',
].join('\n');

export const DEFAULT_NAME = 'platform operator';
export const DEFAULT_EMAIL = 'operator@platform.invalid';

/** Credentials for --endpoint (LocalStack and DynamoDB Local accept any). */
const ENDPOINT_CREDENTIALS = { accessKeyId: 'test', secretAccessKey: 'test' };

export interface Target {
  readonly table: string;
  readonly region: string;
  readonly envelopeKeyArn?: string;
}

class UsageError extends Error {}

/** The table (and envelope key) a deployment's data stack reports in its outputs. */
export async function stackTarget(stack: string, options: { region?: string; endpoint?: string }): Promise<Target> {
  const client = new CloudFormationClient({
    ...(options.region ? { region: options.region } : {}),
    ...(options.endpoint ? { endpoint: options.endpoint, credentials: ENDPOINT_CREDENTIALS } : {}),
  });
  let region: string;
  try {
    region = await client.config.region();
  } catch {
    throw new UsageError('no AWS region: pass --region or set AWS_REGION (the region you deployed to)');
  }
  let stacks: Stack[] | undefined;
  try {
    ({ Stacks: stacks } = await client.send(new DescribeStacksCommand({ StackName: stack })));
  } catch (error) {
    const e = error as Error;
    if (e.name === 'ValidationError') {
      throw new UsageError(`stack "${stack}" not found in ${region}: pass the data stack's name as cdk deploy printed it (<name>-data, e.g. secrets-api-data)`);
    }
    throw new Error(`DescribeStacks ${stack} in ${region} failed: ${e.name}: ${e.message}`);
  }
  const outputs = new Map((stacks?.[0]?.Outputs ?? []).map((o) => [o.OutputKey, o.OutputValue]));
  const table = outputs.get('TableName');
  if (!table) {
    throw new UsageError(`stack "${stack}" has no TableName output: pass the data stack (<name>-data), deployed from this version (cdk deploy --all)`);
  }
  return { table, region, envelopeKeyArn: outputs.get('EnvelopeKeyArn') };
}

export interface Io {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
}

const stdio: Io = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

/** The command; returns the exit code (0 created, 1 refused or failed, 2 bad usage). */
export async function main(argv: readonly string[], io: Io = stdio): Promise<number> {
  try {
    const { values } = parseArgs({
      args: [...argv],
      options: {
        stack: { type: 'string' },
        table: { type: 'string' },
        region: { type: 'string' },
        endpoint: { type: 'string' },
        name: { type: 'string' },
        email: { type: 'string' },
        force: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
      strict: true,
      allowPositionals: false,
    });
    if (values.help) {
      io.err(USAGE);
      return 0;
    }
    if (!values.stack === !values.table) throw new UsageError('pass exactly one of --stack <data stack> and --table <table>');
    const name = Name.safeParse(values.name ?? DEFAULT_NAME);
    if (!name.success) throw new UsageError('--name must be 1-128 characters');
    const email = Email.safeParse(values.email ?? DEFAULT_EMAIL);
    if (!email.success) throw new UsageError('--email must be an e-mail address');
    if (values.endpoint !== undefined && !URL.canParse(values.endpoint)) throw new UsageError('--endpoint must be a URL');

    const target: Target = values.stack
      ? await stackTarget(values.stack, { region: values.region, endpoint: values.endpoint })
      : { table: values.table!, region: values.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1' };

    // lib/config.ts reads these once, at the first table call below
    Object.assign(process.env, {
      TABLE_NAME: target.table,
      AWS_REGION: target.region,
      KEY_PROVIDER: 'kms',
      // creating an account seals nothing, so no KMS call is made; lib/config wants a key id
      KMS_KEY_ID: target.envelopeKeyArn ?? 'unused-by-operator-create',
    });
    if (values.endpoint) process.env.DYNAMODB_ENDPOINT = values.endpoint;
    else delete process.env.DYNAMODB_ENDPOINT;

    const { createOperatorAccount, OperatorExists } = await import('../../lib/operator/accounts.js');
    try {
      const { tenant, api_key } = await createOperatorAccount(
        { name: name.data, admin_email: email.data },
        { force: values.force, actor: 'operator:create' },
      );
      io.out(api_key.key);
      io.err(
        `created platform-operator account ${tenant.id} ("${tenant.name}", admin ${tenant.admin_email}) in table ${target.table} (${target.region}).\n` +
          `Its admin API key (${api_key.prefix}…) is the line on stdout, shown this once: the table holds only its SHA-256.\n` +
          'Call the API with: Authorization: Bearer <key>',
      );
      return 0;
    } catch (error) {
      if (error instanceof OperatorExists) {
        const which = error.tenantIds.length > 0 ? `account ${error.tenantIds.join(', ')}` : 'created just now by another run';
        io.err(
          `refused: table ${target.table} (${target.region}) already has a platform operator (${which}). ` +
            'Use its key, or run again with --force to create another operator account.',
        );
        return 1;
      }
      throw error;
    }
  } catch (error) {
    const e = error as Error;
    if (error instanceof UsageError || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.err(`operator:create: ${e.message}\n${USAGE}`);
      return 2;
    }
    io.err(`operator:create failed: ${e.name}: ${e.message}`);
    return 1;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main(process.argv.slice(2));
}

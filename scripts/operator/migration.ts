import { parseArgs } from 'node:util';

/**
 * The command line of the one-off table migrations (`operator:migrate-shards`,
 * `operator:migrate-meter`): `--table <table> [--region r] [--endpoint url]`, the caller's own
 * AWS credentials. The table settings are in the environment before the migration's module
 * loads (lib/config.ts reads it once); prints the migration's counts as one JSON line.
 */
export function runMigration(script: string, migrate: () => Promise<unknown>): void {
  const usage = `usage: npm run -s ${script} -- --table <table> [--region <region>] [--endpoint <url>]`;
  const { values } = parseArgs({ options: { table: { type: 'string' }, region: { type: 'string' }, endpoint: { type: 'string' } } });
  if (!values.table) {
    process.stderr.write(`${usage}\n`);
    process.exit(2);
  }
  Object.assign(process.env, {
    TABLE_NAME: values.table,
    ...(values.region ? { AWS_REGION: values.region } : {}),
    ...(values.endpoint ? { DYNAMODB_ENDPOINT: values.endpoint } : {}),
  });
  migrate()
    .then((counts) => process.stdout.write(`${JSON.stringify(counts)}\n`))
    .catch((error: unknown) => {
      process.stderr.write(`${String((error as Error).stack ?? error)}\n`);
      process.exit(1);
    });
}

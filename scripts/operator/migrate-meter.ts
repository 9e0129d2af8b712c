/**
 * `npm run -s operator:migrate-meter -- --table <table> [--region r] [--endpoint url]`
 *
 * The one-off migration of a deployed table after the release that gave each account's usage
 * items a partition of their own (docs/capacity.md, "Existing tables"): moves every
 * `T#<tid>/USAGE#...` item to `METER#<tid>` (lib/store/usage.ts moveUsageToMeter), with the
 * caller's own AWS credentials. Safe to repeat; prints the items moved and the requests
 * they carried.
 */
import { parseArgs } from 'node:util';

const USAGE = 'usage: npm run -s operator:migrate-meter -- --table <table> [--region <region>] [--endpoint <url>]';

async function main() {
  const { values } = parseArgs({ options: { table: { type: 'string' }, region: { type: 'string' }, endpoint: { type: 'string' } } });
  if (!values.table) {
    process.stderr.write(`${USAGE}\n`);
    process.exit(2);
  }
  Object.assign(process.env, {
    TABLE_NAME: values.table,
    ...(values.region ? { AWS_REGION: values.region } : {}),
    ...(values.endpoint ? { DYNAMODB_ENDPOINT: values.endpoint } : {}),
  });
  const { moveUsageToMeter } = await import('../../lib/store/usage.js');
  process.stdout.write(`${JSON.stringify(await moveUsageToMeter())}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error).stack ?? error)}\n`);
  process.exit(1);
});

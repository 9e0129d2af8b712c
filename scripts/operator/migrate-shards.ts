/**
 * `npm run -s operator:migrate-shards -- --table <table> [--region r] [--endpoint url]`
 *
 * The one-off migration of a deployed table after the release that spread the platform-wide
 * gsi1 listings over shards (docs/capacity.md, "Existing tables"): moves every entry still
 * under `AUDIT`, `TENANTS` or `LEASES` to its `<NAME>#<n>` shard (lib/store/shards.ts
 * moveToShards), with the caller's own AWS credentials. Safe to repeat; prints the counts.
 */
import { parseArgs } from 'node:util';

const USAGE = 'usage: npm run -s operator:migrate-shards -- --table <table> [--region <region>] [--endpoint <url>]';

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
  const { moveToShards } = await import('../../lib/store/shards.js');
  process.stdout.write(`${JSON.stringify(await moveToShards())}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error).stack ?? error)}\n`);
  process.exit(1);
});

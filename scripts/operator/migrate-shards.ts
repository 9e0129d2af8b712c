/**
 * `npm run -s operator:migrate-shards -- --table <table> [--region r] [--endpoint url]`
 *
 * The one-off migration of a deployed table after the release that spread the platform-wide
 * gsi1 listings over shards (docs/capacity.md, "Existing tables"): moves every entry still
 * under `AUDIT`, `TENANTS` or `LEASES` to its `<NAME>#<n>` shard (lib/store/shards.ts
 * moveToShards), with the caller's own AWS credentials. Safe to repeat; prints the counts.
 */
import { runMigration } from './migration.js';

runMigration('operator:migrate-shards', async () => (await import('../../lib/store/shards.js')).moveToShards());

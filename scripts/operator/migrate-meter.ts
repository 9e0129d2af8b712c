/**
 * `npm run -s operator:migrate-meter -- --table <table> [--region r] [--endpoint url]`
 *
 * The one-off migration of a deployed table after the release that gave each account's usage
 * items a partition of their own (docs/capacity.md, "Existing tables"): moves every
 * `T#<tid>/USAGE#...` item to `METER#<tid>` (lib/store/usage.ts moveUsageToMeter), with the
 * caller's own AWS credentials. Safe to repeat; prints the items moved and the requests
 * they carried.
 */
import { runMigration } from './migration.js';

runMigration('operator:migrate-meter', async () => (await import('../../lib/store/usage.js')).moveUsageToMeter());

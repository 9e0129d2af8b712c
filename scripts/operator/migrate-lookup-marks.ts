/**
 * `npm run -s operator:migrate-lookup-marks -- --table <table> [--region r] [--endpoint url]`
 *
 * The one-off migration of a deployed table before (and once more after) the release whose
 * lookup items carry their owner marks (lib/tenancy/lookups.ts; docs/deployment.md): marks
 * every existing lookup item with the account it names (lib/store/lookup-marks.ts), with the
 * caller's own AWS credentials. Safe to repeat; prints the items scanned, marked, and found
 * forged (marked by another account: left refused).
 */
import { runMigration } from './migration.js';

runMigration('operator:migrate-lookup-marks', async () => (await import('../../lib/store/lookup-marks.js')).markLookupItems());

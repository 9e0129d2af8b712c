/**
 * `npm run -s operator:migrate-platform-listings -- --table <table> [--region r] [--endpoint url]`
 * (until package.json has the script: `npx tsx scripts/operator/migrate-platform-listings.ts -- ...`)
 *
 * The one-off migration of a deployed table before (and once more after) the release whose
 * platform listings (TENANTS, EMAIL, TOKENKEYS, AUDIT, LEASES) have their own index `plat`
 * (lib/store/keys.ts; docs/deployment.md): lists every existing entry there, derived from the
 * item's own keys, with the caller's own AWS credentials. Safe to repeat; prints the items
 * scanned, listed, already listed, and found forged (a listing key on an item that belongs to
 * no listing: left out).
 */
import { runMigration } from './migration.js';

runMigration('operator:migrate-platform-listings', async () => (await import('../../lib/store/platform-listings-migration.js')).movePlatformListings());

import * as z from 'zod/v4';
import { Limit, OptionalCursor } from '../../lib/schemas.js';
import { defineHandler, ok } from '../../lib/http/index.js';
import { CliSyncSchema } from '../../lib/account/schemas.js';
import { cliSync } from '../../lib/account/cli-sync.js';

const SyncQuery = z.strictObject({
  since: z.string().max(512).optional(),
  cursor: OptionalCursor,
  include_values: z.enum(['true', 'false']).optional(),
  limit: Limit(500),
});

/** GET /api/v1/cli/sync (admin:*): metadata snapshot or changes since a sync token. */
export const sync = defineHandler({
  summary: 'Sync the account’s metadata to the CLI',
  description:
    'Without `since`: a full snapshot of the account’s secrets, resources, API keys and webhooks (metadata; generic secrets’ values only with include_values=true, audited), paged by `cursor`. With `since=<sync_token>`: what changed since, and what was deleted. A token of another account is refused.',
  responses: { 200: CliSyncSchema },
  errors: ['invalid_sync_token', 'invalid_cursor'],
  query: SyncQuery,
  async handler({ ctx, query }) {
    return ok(await cliSync(ctx, query));
  },
});

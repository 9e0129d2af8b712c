import * as z from 'zod/v4';
import { Limit, OptionalCursor } from '../../lib/schemas.js';
import { defineHandler, ok } from '../../lib/http/index.js';
import { cliSync } from './cli-sync-service.js';

const SyncQuery = z.strictObject({
  since: z.string().max(512).optional(),
  cursor: OptionalCursor,
  include_values: z.enum(['true', 'false']).optional(),
  limit: Limit(500),
});

/** GET /api/v1/cli/sync (admin:*): metadata snapshot or changes since a sync token. */
export const sync = defineHandler({
  query: SyncQuery,
  async handler({ ctx, query }) {
    return ok(await cliSync(ctx, query));
  },
});

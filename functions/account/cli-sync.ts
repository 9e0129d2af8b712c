import { z } from 'zod';
import { defineHandler, ok } from '../../lib/http/index.js';
import { cliSync } from './cli-sync-service.js';

const SyncQuery = z.strictObject({
  since: z.string().max(512).optional(),
  cursor: z.string().max(2048).optional(),
  include_values: z.enum(['true', 'false']).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(500),
});

/** GET /api/v1/cli/sync (admin:*): metadata snapshot or changes since a sync token. */
export const sync = defineHandler({
  query: SyncQuery,
  async handler({ ctx, query }) {
    return ok(await cliSync(ctx, query));
  },
});

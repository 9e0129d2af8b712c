import { defineHandler, notImplemented } from '../lib/http/index.js';

/**
 * Serves every route whose capability is not built yet (handler null in lib/routes.ts):
 * the same authentication and scope checks as a built route, then 501.
 */
export const handler = defineHandler({
  async handler() {
    throw notImplemented();
  },
});

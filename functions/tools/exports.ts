import { defineHandler, ok } from '../../lib/http/index.js';
import { ExportBody, exportCredentials } from '../../lib/tools/export/service.js';

/** Exports for password managers (lib/tools/export): Bitwarden JSON, Apple Passwords CSV, Chrome/Edge CSV. */
export const json = defineHandler({
  body: ExportBody,
  async handler({ ctx, body }) {
    return ok(await exportCredentials(ctx, 'json', body));
  },
});

export const keychain = defineHandler({
  body: ExportBody,
  async handler({ ctx, body }) {
    return ok(await exportCredentials(ctx, 'keychain', body));
  },
});

export const credentialManager = defineHandler({
  body: ExportBody,
  async handler({ ctx, body }) {
    return ok(await exportCredentials(ctx, 'credential-manager', body));
  },
});

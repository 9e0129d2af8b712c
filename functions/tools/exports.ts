import { defineHandler, ok } from '../../lib/http/index.js';
import { ExportBody, exportCredentials } from '../../lib/tools/export/service.js';
import { CredentialExport } from '../../lib/tools/schemas.js';

/** One export route: the stored credentials the caller may read, in `format`. */
const exportAs = (format: Parameters<typeof exportCredentials>[1], summary: string) =>
  defineHandler({
    summary,
    description:
      'The stored credentials the caller may read, as a file to import into the password manager; with `passphrase` encrypted (age for CSV). Types the caller cannot read are listed in `skipped_types`. Audited.',
    responses: { 200: CredentialExport },
    errors: ['bad_request'],
    body: ExportBody,
    async handler({ ctx, body }) {
      return ok(await exportCredentials(ctx, format, body));
    },
  });

/** Exports for password managers (lib/tools/export): Bitwarden JSON, Apple Passwords CSV, Chrome/Edge CSV. */
export const json = exportAs('json', 'Export credentials as Bitwarden JSON');
export const keychain = exportAs('keychain', 'Export credentials as Apple Passwords CSV');
export const credentialManager = exportAs('credential-manager', 'Export credentials as Chrome/Edge password CSV');

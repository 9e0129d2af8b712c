import { defineHandler, ok } from '../../lib/http/index.js';
import { ExportBody, exportCredentials } from '../../lib/tools/export/service.js';
import { CredentialExport } from '../../lib/tools/schemas.js';

/** Exports for password managers (lib/tools/export): Bitwarden JSON, Apple Passwords CSV, Chrome/Edge CSV. */
export const json = defineHandler({
  summary: 'Export credentials as Bitwarden JSON',
  description:
    'The stored credentials the caller may read, as a file to import into the password manager; with `passphrase` encrypted (age for CSV). Types the caller cannot read are listed in `skipped_types`. Audited.',
  responses: { 200: CredentialExport },
  errors: ['bad_request'],
  body: ExportBody,
  async handler({ ctx, body }) {
    return ok(await exportCredentials(ctx, 'json', body));
  },
});

export const keychain = defineHandler({
  summary: 'Export credentials as Apple Passwords CSV',
  description:
    'The stored credentials the caller may read, as a file to import into the password manager; with `passphrase` encrypted (age for CSV). Types the caller cannot read are listed in `skipped_types`. Audited.',
  responses: { 200: CredentialExport },
  errors: ['bad_request'],
  body: ExportBody,
  async handler({ ctx, body }) {
    return ok(await exportCredentials(ctx, 'keychain', body));
  },
});

export const credentialManager = defineHandler({
  summary: 'Export credentials as Chrome/Edge password CSV',
  description:
    'The stored credentials the caller may read, as a file to import into the password manager; with `passphrase` encrypted (age for CSV). Types the caller cannot read are listed in `skipped_types`. Audited.',
  responses: { 200: CredentialExport },
  errors: ['bad_request'],
  body: ExportBody,
  async handler({ ctx, body }) {
    return ok(await exportCredentials(ctx, 'credential-manager', body));
  },
});

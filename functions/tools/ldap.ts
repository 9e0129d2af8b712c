import { defineHandler, ok } from '../../lib/http/index.js';
import { IdParams } from '../../lib/schemas.js';
import { ExportQuery, exportLdif, ImportBody, importLdif, SearchBody, searchDirectory } from '../../lib/tools/ldap.js';
import { LdapSearch, LdifExport, LdifImport } from '../../lib/tools/schemas.js';

/** LDAP directories through an integration of provider "ldap" (lib/tools/ldap.ts): search, LDIF export and import. */
export const search = defineHandler({
  summary: 'Search an LDAP directory',
  description: 'Through an integration of provider `ldap`; password attributes are withheld.',
  responses: { 200: LdapSearch },
  errors: ['not_found', 'bad_request', 'service_unavailable'],
  params: IdParams,
  body: SearchBody,
  async handler({ ctx, params, body }) {
    return ok(await searchDirectory(ctx, params.id, body));
  },
});

export const exportDirectory = defineHandler({
  summary: 'Export an LDAP directory as LDIF',
  responses: { 200: LdifExport },
  errors: ['not_found', 'bad_request', 'service_unavailable'],
  query: ExportQuery,
  async handler({ ctx, query }) {
    return ok(await exportLdif(ctx, query));
  },
});

export const importDirectory = defineHandler({
  summary: 'Import LDIF into an LDAP directory',
  description: 'Applies content and change records in order (`dry_run` says what would apply); each record’s outcome is listed. Audited.',
  responses: { 200: LdifImport },
  errors: ['not_found', 'bad_request', 'service_unavailable'],
  body: ImportBody,
  async handler({ ctx, body }) {
    return ok(await importLdif(ctx, body));
  },
});

import { defineHandler, ok } from '../../lib/http/index.js';
import { IdParams } from '../../lib/schemas.js';
import { ExportQuery, exportLdif, ImportBody, importLdif, SearchBody, searchDirectory } from '../../lib/tools/ldap.js';

/** LDAP directories through an integration of provider "ldap" (lib/tools/ldap.ts): search, LDIF export and import. */
export const search = defineHandler({
  params: IdParams,
  body: SearchBody,
  async handler({ ctx, params, body }) {
    return ok(await searchDirectory(ctx, params.id, body));
  },
});

export const exportDirectory = defineHandler({
  query: ExportQuery,
  async handler({ ctx, query }) {
    return ok(await exportLdif(ctx, query));
  },
});

export const importDirectory = defineHandler({
  body: ImportBody,
  async handler({ ctx, body }) {
    return ok(await importLdif(ctx, body));
  },
});

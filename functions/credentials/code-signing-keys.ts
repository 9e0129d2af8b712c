import * as z from 'zod/v4';
import { hasScope } from '../../lib/auth/scopes.js';
import { defineHandler, forbidden, ok } from '../../lib/http/index.js';
import { etagOf } from '../../lib/resources/store.js';
import { CodeSigningExport, codeSigningKey } from '../../lib/credentials/types/code-signing-key.js';
import { collectionHandlers } from '../../lib/credentials/handlers.js';
import { IdParams } from '../../lib/schemas.js';
import { openTyped } from '../../lib/credentials/service.js';

const crud = collectionHandlers(codeSigningKey);
/** The collection's five CRUD routes. */
export const { list, create, get, update, remove } = crud;
const def = crud.def;

/**
 * GET /api/v1/code-signing-keys/{id}/export: the public material (public key, fingerprint,
 * certificate chain). With `include_private_key=true` also the PKCS#8 private key, but only
 * for a key imported as exportable, and only to a caller holding export:read (403 otherwise;
 * a key whose private half lives in an HSM has none to give).
 */
export const exportKey = defineHandler({
  summary: 'Export a code-signing key',
  description:
    'The public material (public key, fingerprint, certificate chain); with `include_private_key=true` also the PKCS#8 private key, only for a key imported as exportable and a caller holding `export:read`.',
  responses: { 200: CodeSigningExport },
  errors: ['not_exportable', 'insufficient_scope'],
  params: IdParams,
  query: z.strictObject({ include_private_key: z.enum(['true', 'false']).default('false') }),
  async handler({ ctx, params, query }) {
    const { record, fields } = await openTyped(ctx.principal.tenantId, def, params.id);
    const out: Record<string, unknown> = {
      id: record.id,
      name: record.name,
      backend: fields.backend,
      algorithm: fields.algorithm,
      public_key: fields.public_key,
      fingerprint_sha256: fields.fingerprint_sha256,
      certificate_chain: fields.certificate_chain ?? null,
      exportable: fields.exportable === true,
    };
    if (query.include_private_key === 'true') {
      if (fields.exportable !== true || typeof fields.private_key !== 'string')
        throw forbidden('this key is not exportable: only keys imported with "exportable": true can be exported', 'not_exportable');
      if (!hasScope(ctx.principal.scopes, 'export:read')) throw forbidden('missing scope: export:read', 'insufficient_scope');
      out.private_key = fields.private_key;
    }
    return ok({ code_signing_key: out }, { ETag: etagOf(record) });
  },
});

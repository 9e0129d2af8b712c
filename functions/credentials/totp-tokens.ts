import QRCode from 'qrcode';
import * as z from 'zod/v4';
import { badRequest, defineHandler, ok, created } from '../../lib/http/index.js';
import { etagOf } from '../../lib/resources/store.js';
import { collectionHandlers } from '../../lib/credentials/handlers.js';
import { IdParams } from '../../lib/schemas.js';
import { createTyped, openTyped, show } from '../../lib/credentials/service.js';
import { codeAt, fieldsFromUri, TotpCode, TotpExport, totpOf, totpToken } from '../../lib/credentials/types/totp-token.js';

/** POST /api/v1/totp-tokens/import, POST /{id}/generate, GET /{id}/export. */
const crud = collectionHandlers(totpToken);
/** The collection's five CRUD routes. */
export const { list, create, get, update, remove } = crud;
const def = crud.def;
/** The import answer: the created tokens under the list key, as create shows each. */
const ImportAnswer = z.strictObject({ [def.listKey]: z.array(crud.responses.resource), total: z.int().min(1) });

const Uri = z.string().min(10).max(4096).startsWith('otpauth://', 'an otpauth:// URI');
const Common = { tags: z.array(z.string()).max(50).optional(), container_id: z.uuid().nullable().optional() };

export const ImportBody = z.union([
  z.strictObject({ uri: Uri, name: z.string().trim().min(1).max(128).optional(), description: z.string().max(1024).optional(), ...Common }),
  z.strictObject({ uris: z.array(Uri).min(1).max(50), ...Common }),
]);

/**
 * Imports one URI (`uri`, optional `name`) or a batch (`uris`, up to 50). Every URI is
 * validated before anything is stored: one bad URI fails the whole batch with its index.
 * Each token is then created in its own transaction; the name defaults to "issuer:account".
 */
export const importUris = defineHandler({
  summary: 'Import TOTP tokens from otpauth:// URIs',
  description:
    'One URI (`uri`, optional `name`) or up to 50 (`uris`). Every URI is validated before anything is stored: one bad URI fails the batch, naming its index. The name defaults to `issuer:account`.',
  responses: { 201: ImportAnswer },
  errors: ['bad_request', 'already_exists', 'quota_exceeded', 'not_found'],
  body: ImportBody,
  async handler({ ctx, body }) {
    const uris = 'uris' in body ? body.uris : [body.uri];
    const parsed = uris.map((u, i) => fieldsFromUri(u, 'uris' in body ? `body.uris.${i}` : 'body.uri'));
    const made = [];
    for (const fields of parsed) {
      const name =
        ('name' in body && body.name) ||
        (fields.issuer ? `${String(fields.issuer)}:${String(fields.account)}` : String(fields.account)).slice(0, 128);
      const description = 'description' in body ? body.description : undefined;
      const one = await createTyped(ctx, def, { ...fields, name, description, tags: body.tags, container_id: body.container_id });
      made.push(show(def, one.record, one.secret));
    }
    return created({ [def.listKey]: made, total: made.length });
  },
});

const At = z.union([z.number().int().min(0).max(253402300799), z.iso.datetime({ offset: true })]);

/** The current code (or the code at `at`: Unix seconds or ISO-8601) and the seconds it stays valid. */
export const generate = defineHandler({
  summary: 'Generate a TOTP code',
  description: 'The current code (or the code at `at`: Unix seconds or ISO 8601) and how long it stays valid.',
  responses: { 200: TotpCode },
  errors: ['bad_request'],
  params: IdParams,
  body: z.strictObject({ at: At.optional() }).optional(),
  async handler({ ctx, params, body }) {
    const { record, fields } = await openTyped(ctx.principal.tenantId, def, params.id);
    const at = body?.at === undefined ? Date.now() : typeof body.at === 'number' ? body.at * 1000 : Date.parse(body.at);
    if (!Number.isFinite(at)) throw badRequest('invalid time');
    return ok({ id: record.id, ...codeAt(fields, at) });
  },
});

/** The otpauth:// URI (it contains the secret) and, unless `qr=false`, a QR code PNG of it. */
export const exportUri = defineHandler({
  summary: 'Export a TOTP token as an otpauth:// URI',
  description: 'The otpauth:// URI (it contains the secret) and, unless `qr=false`, a QR code of it as a PNG.',
  responses: { 200: TotpExport },
  params: IdParams,
  query: z.strictObject({ qr: z.enum(['true', 'false']).default('true') }),
  async handler({ ctx, params, query }) {
    const { record, fields } = await openTyped(ctx.principal.tenantId, def, params.id);
    const uri = totpOf(fields).toString();
    const qr =
      query.qr === 'true' ? (await QRCode.toBuffer(uri, { type: 'png', errorCorrectionLevel: 'M', margin: 2, width: 256 })).toString('base64') : null;
    return ok({ id: record.id, uri, qr_png_base64: qr }, { ETag: etagOf(record) });
  },
});

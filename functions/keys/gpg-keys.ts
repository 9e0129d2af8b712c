import { z } from 'zod';
import { created, defineHandler, ok } from '../../lib/http/index.js';
import { deleteKey, etagOf, keyView, listKeys, requireExportScopes, requireReadScopes, updateKeyMeta } from './common.js';
import { exportGpgKey, generateGpgKey, getGpgKey, importGpgKey } from './gpg-service.js';
import { Description, Email, ExportQuery, IdParams, KeyName, KeyText, ListQuery, Passphrase, Tags, UpdateKeyBody } from './schemas.js';

/**
 * /api/v1/gpg-keys. Scopes checked here: GET /{id} needs gpg:read; GET /{id}/export needs
 * gpg:read for the armored public key and gpg:read + export:read for `?private=true`.
 */
const TYPE = 'gpg_key';
const UidText = z.string().min(1).max(128).regex(/^[^<>\r\n()]*$/, 'no angle brackets, parentheses or line breaks');

const UserId = z
  .strictObject({ name: UidText.optional(), email: Email.optional(), comment: UidText.optional() })
  .refine((u) => u.name !== undefined || u.email !== undefined, { message: 'a user id needs a name or an email' });

const GenerateBody = z.strictObject({
  name: KeyName,
  algorithm: z.enum(['curve25519', 'rsa']).default('curve25519'),
  bits: z.number().int().optional(),
  user_ids: z.array(UserId).min(1).max(10),
  expires_in_days: z.number().int().min(1).max(36500).optional(),
  description: Description.optional(),
  tags: Tags.optional(),
});

const ImportBody = z.strictObject({
  name: KeyName,
  armored_key: KeyText,
  passphrase: Passphrase.optional(),
  description: Description.optional(),
  tags: Tags.optional(),
});

export const list = defineHandler({
  query: ListQuery,
  async handler({ ctx, query }) {
    const page = await listKeys(ctx, TYPE, query);
    return ok({ gpg_keys: page.items, total: page.items.length, limit: query.limit, offset: query.offset, next_cursor: page.nextCursor });
  },
});

export const generate = defineHandler({
  body: GenerateBody,
  async handler({ ctx, body }) {
    const key = await generateGpgKey(ctx, body);
    return created({ gpg_key: key }, { ETag: etagOf(key) });
  },
});

export const importKey = defineHandler({
  body: ImportBody,
  async handler({ ctx, body }) {
    const key = await importGpgKey(ctx, body);
    return created({ gpg_key: key }, { ETag: etagOf(key) });
  },
});

export const get = defineHandler({
  params: IdParams,
  async handler({ ctx, params }) {
    requireReadScopes(ctx, TYPE);
    const { record } = await getGpgKey(ctx, params.id);
    return ok({ gpg_key: keyView(record) }, { ETag: etagOf(record) });
  },
});

export const exportKey = defineHandler({
  params: IdParams,
  query: ExportQuery,
  async handler({ ctx, params, query }) {
    requireReadScopes(ctx, TYPE);
    if (query.private) requireExportScopes(ctx, TYPE);
    return ok({ export: await exportGpgKey(ctx, params.id, query.private) });
  },
});

export const update = defineHandler({
  params: IdParams,
  body: UpdateKeyBody,
  async handler({ ctx, params, body, headers }) {
    const rec = await updateKeyMeta(ctx, TYPE, params.id, body, headers['if-match']);
    return ok({ gpg_key: keyView(rec) }, { ETag: etagOf(rec) });
  },
});

export const remove = defineHandler({
  params: IdParams,
  async handler({ ctx, params, headers }) {
    const rec = await deleteKey(ctx, TYPE, params.id, headers['if-match']);
    return ok({ deleted: true, gpg_key: { id: rec.id, name: rec.name } });
  },
});

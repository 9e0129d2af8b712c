import { z } from 'zod';
import { created, defineHandler, ok } from '../../lib/http/index.js';
import { deleteKey, etagOf, keyView, listKeys, requireExportScopes, requireReadScopes, updateKeyMeta } from './common.js';
import { Description, ExportQuery, IdParams, KeyName, KeyText, ListQuery, Passphrase, Tags, UpdateKeyBody } from './schemas.js';
import { exportSshKey, generateSshKey, getSshKey, importSshKey } from './ssh-service.js';

/**
 * /api/v1/ssh-keys. Scopes checked here: GET /{id} needs ssh:read (public parts only);
 * GET /{id}/export needs ssh:read for the public key and ssh:read + export:read for
 * `?private=true` (the OpenSSH private key).
 */
const TYPE = 'ssh_key';
const Comment = z.string().max(256).regex(/^[^\r\n]*$/, 'one line');

const GenerateBody = z.strictObject({
  name: KeyName,
  algorithm: z.enum(['ed25519', 'ecdsa', 'rsa']).default('ed25519'),
  bits: z.number().int().optional(),
  comment: Comment.optional(),
  description: Description.optional(),
  tags: Tags.optional(),
});

const ImportBody = z.strictObject({
  name: KeyName,
  private_key: KeyText.optional(),
  public_key: KeyText.optional(),
  passphrase: Passphrase.optional(),
  comment: Comment.optional(),
  description: Description.optional(),
  tags: Tags.optional(),
});

export const list = defineHandler({
  query: ListQuery,
  async handler({ ctx, query }) {
    const page = await listKeys(ctx, TYPE, query);
    return ok({ ssh_keys: page.items, total: page.items.length, limit: query.limit, offset: query.offset, next_cursor: page.nextCursor });
  },
});

export const generate = defineHandler({
  body: GenerateBody,
  async handler({ ctx, body }) {
    const key = await generateSshKey(ctx, body);
    return created({ ssh_key: key }, { ETag: etagOf(key) });
  },
});

export const importKey = defineHandler({
  body: ImportBody,
  async handler({ ctx, body }) {
    const key = await importSshKey(ctx, body);
    return created({ ssh_key: key }, { ETag: etagOf(key) });
  },
});

export const get = defineHandler({
  params: IdParams,
  async handler({ ctx, params }) {
    requireReadScopes(ctx, TYPE);
    const { record } = await getSshKey(ctx, params.id);
    return ok({ ssh_key: keyView(record) }, { ETag: etagOf(record) });
  },
});

export const exportKey = defineHandler({
  params: IdParams,
  query: ExportQuery,
  async handler({ ctx, params, query }) {
    requireReadScopes(ctx, TYPE);
    if (query.private) requireExportScopes(ctx, TYPE);
    return ok({ export: await exportSshKey(ctx, params.id, query.private) });
  },
});

export const update = defineHandler({
  params: IdParams,
  body: UpdateKeyBody,
  async handler({ ctx, params, body, headers }) {
    const rec = await updateKeyMeta(ctx, TYPE, params.id, body, headers['if-match']);
    return ok({ ssh_key: keyView(rec) }, { ETag: etagOf(rec) });
  },
});

export const remove = defineHandler({
  params: IdParams,
  async handler({ ctx, params, headers }) {
    const rec = await deleteKey(ctx, TYPE, params.id, headers['if-match']);
    return ok({ deleted: true, ssh_key: { id: rec.id, name: rec.name } });
  },
});

import { defineHandler, ok, created } from '../../lib/http/index.js';
import { listPage } from '../../lib/schemas.js';
import { CreateSecretBody, ListSecretsQuery, SecretParams, UpdateSecretBody } from '../../lib/secrets/schemas.js';
import { createSecret, deleteSecret, etagOf, getSecret, listSecrets, updateSecret } from '../../lib/secrets/service.js';

/** Metadata only; `total` is the number in this page (the spec), `next_cursor` continues. */
export const list = defineHandler({
  query: ListSecretsQuery,
  async handler({ ctx, query }) {
    const page = await listSecrets(ctx, query);
    return ok(listPage('secrets', page.secrets, page.nextCursor, query));
  },
});

export const create = defineHandler({
  body: CreateSecretBody,
  async handler({ ctx, body }) {
    const secret = await createSecret(ctx, body);
    return created({ secret }, { ETag: etagOf(secret) });
  },
});

export const get = defineHandler({
  params: SecretParams,
  async handler({ ctx, params }) {
    const secret = await getSecret(ctx, params.name);
    return ok({ secret }, { ETag: etagOf(secret) });
  },
});

export const update = defineHandler({
  params: SecretParams,
  body: UpdateSecretBody,
  async handler({ ctx, params, body, headers }) {
    const secret = await updateSecret(ctx, params.name, body, headers['if-match']);
    return ok({ secret }, { ETag: etagOf(secret) });
  },
});

export const remove = defineHandler({
  params: SecretParams,
  async handler({ ctx, params, headers }) {
    const secret = await deleteSecret(ctx, params.name, headers['if-match']);
    return ok({ deleted: true, secret: { id: secret.id, name: secret.name } });
  },
});

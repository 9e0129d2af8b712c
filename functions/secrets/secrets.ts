import { defineHandler, ok, created } from '../../lib/http/index.js';
import { listPage } from '../../lib/schemas.js';
import {
  CreateSecretBody,
  ListSecretsQuery,
  SecretAnswer,
  SecretDeleted,
  SecretList,
  SecretParams,
  UpdateSecretBody,
} from '../../lib/secrets/schemas.js';
import { createSecret, deleteSecret, etagOf, getSecret, listSecrets, updateSecret } from '../../lib/secrets/service.js';

/** Metadata only; `total` is the number in this page (the spec), `next_cursor` continues. */
export const list = defineHandler({
  summary: 'List secrets',
  description: 'The account’s secrets without their values, oldest first; page with `limit` and `offset` or `cursor`.',
  responses: { 200: SecretList },
  errors: ['bad_request'],
  query: ListSecretsQuery,
  async handler({ ctx, query }) {
    const page = await listSecrets(ctx, query);
    return ok(listPage('secrets', page.secrets, page.nextCursor, query));
  },
});

export const create = defineHandler({
  summary: 'Create a secret',
  description: 'Stores named key/value data encrypted at rest. The answer carries the secret with its value and its ETag (version 1).',
  responses: { 201: SecretAnswer },
  errors: ['already_exists', 'quota_exceeded', 'not_found'],
  body: CreateSecretBody,
  async handler({ ctx, body }) {
    const secret = await createSecret(ctx, body);
    return created({ secret }, { ETag: etagOf(secret) });
  },
});

export const get = defineHandler({
  summary: 'Read a secret',
  description: 'The secret with its value, by name (or by id for a secret shared with the caller); the ETag names its version.',
  responses: { 200: SecretAnswer },
  errors: ['not_found'],
  params: SecretParams,
  async handler({ ctx, params }) {
    const secret = await getSecret(ctx, params.name);
    return ok({ secret }, { ETag: etagOf(secret) });
  },
});

export const update = defineHandler({
  summary: 'Update a secret',
  description:
    'Changes the given fields (`data` and `tags` replace the whole value) and makes a new version. `If-Match` is required: the ETag of a GET (a newer version: 409 `stale_etag`), or `*` to overwrite any version; without it 428 `precondition_required`.',
  responses: { 200: SecretAnswer },
  errors: ['not_found', 'stale_etag', 'precondition_failed', 'precondition_required', 'bad_request'],
  ifMatch: 'required',
  params: SecretParams,
  body: UpdateSecretBody,
  async handler({ ctx, params, body, headers }) {
    const secret = await updateSecret(ctx, params.name, body, headers['if-match']);
    return ok({ secret }, { ETag: etagOf(secret) });
  },
});

export const remove = defineHandler({
  summary: 'Delete a secret',
  description: 'Deletes the secret and its versions. `If-Match` makes the delete conditional on the version read.',
  responses: { 200: SecretDeleted },
  errors: ['not_found', 'stale_etag', 'precondition_failed'],
  params: SecretParams,
  async handler({ ctx, params, headers }) {
    const secret = await deleteSecret(ctx, params.name, headers['if-match']);
    return ok({ deleted: true, secret: { id: secret.id, name: secret.name } });
  },
});

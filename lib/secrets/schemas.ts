import * as z from 'zod/v4';
import { atLeastOneField, crossFieldRule, Description, ListPage, Tags, Timestamp } from '../schemas.js';
import { PageQuery } from '../schemas.js';
import { PERMISSIONS } from '../sharing/store/shares.js';

/** A secret's name is its path key: one URL segment, no separators that need escaping. */
export const SecretName = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" and "-", starting with a letter or digit');

const MAX_DATA_BYTES = 256 * 1024;

const SecretData = crossFieldRule(
  z.record(z.string().min(1).max(256), z.string().max(MAX_DATA_BYTES)),
  (d) => Object.keys(d).length >= 1 && Object.keys(d).length <= 100,
  { minProperties: 1, maxProperties: 100 },
  'at least one field is required, at most 100',
).refine((d) => Buffer.byteLength(JSON.stringify(d), 'utf8') <= MAX_DATA_BYTES, { message: `at most ${MAX_DATA_BYTES} bytes in all` });

const ContainerId = z.uuid();

export const CreateSecretBody = z.strictObject({
  name: SecretName,
  description: Description.optional(),
  data: SecretData,
  tags: Tags.optional(),
  container_id: ContainerId.nullable().optional(),
});
export type CreateSecretBody = z.infer<typeof CreateSecretBody>;

/** Partial update: absent fields are kept; `data` and `tags`, when given, replace the whole value. */
export const UpdateSecretBody = atLeastOneField(
  z.strictObject({
    description: Description.optional(),
    data: SecretData.optional(),
    tags: Tags.optional(),
    container_id: ContainerId.nullable().optional(),
  }),
);
export type UpdateSecretBody = z.infer<typeof UpdateSecretBody>;

export const SecretParams = z.strictObject({ name: SecretName });

export const ListSecretsQuery = PageQuery;
export type ListSecretsQuery = z.infer<typeof ListSecretsQuery>;

/* Responses (lib/http/define-handler.ts `HandlerDoc`): what the secrets routes answer. */

/** A secret without its value, as lists and deletions show it (lib/secrets/service.ts `SecretMeta`). */
export const SecretMeta = z.strictObject({
  id: z.uuid().describe('The secret’s id (stable across renames and versions).'),
  name: SecretName.describe('The secret’s name, its path key.'),
  description: z.string().describe('Free text; empty when none.'),
  tags: z.array(z.string()).describe('The secret’s tags.'),
  container_id: z.uuid().nullable().describe('The container holding the secret; null when none.'),
  version: z.int().min(1).describe('Increases by one on every update; the ETag is `"<id>.<version>"`.'),
  created_at: Timestamp,
  updated_at: Timestamp,
  created_by: z.string().nullable().describe('The principal that created the secret (null when unknown).'),
  updated_by: z.string().nullable().describe('The principal that last changed the secret (null when unknown).'),
});

/** A secret with its value; `shared` when the caller reads it through a share of another account. */
export const Secret = SecretMeta.extend({
  data: z.record(z.string(), z.string()).describe('The secret’s fields and their values.'),
  shared: z
    .strictObject({
      share_id: z.uuid(),
      permission: z.enum(PERMISSIONS).describe('What the share allows.'),
      owner_tenant_id: z.string().describe('The account that owns the secret.'),
    })
    .optional()
    .describe('Present when the secret is another account’s, reached through a share.'),
});

export const SecretAnswer = z.strictObject({ secret: Secret });
export const SecretList = ListPage('secrets', SecretMeta, { paged: true, describe: 'The secrets of this page, without their values.' });
export const SecretDeleted = z.strictObject({
  deleted: z.literal(true),
  secret: SecretMeta.pick({ id: true, name: true }),
});

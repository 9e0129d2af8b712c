import * as z from 'zod/v4';
import { Description, Tags } from '../schemas.js';
import { PageQuery } from '../schemas.js';

/** A secret's name is its path key: one URL segment, no separators that need escaping. */
export const SecretName = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" and "-", starting with a letter or digit');

const MAX_DATA_BYTES = 256 * 1024;

const SecretData = z
  .record(z.string().min(1).max(256), z.string().max(MAX_DATA_BYTES))
  .refine((d) => Object.keys(d).length >= 1, { message: 'at least one field is required' })
  .refine((d) => Object.keys(d).length <= 100, { message: 'at most 100 fields' })
  .refine((d) => Buffer.byteLength(JSON.stringify(d), 'utf8') <= MAX_DATA_BYTES, { message: `at most ${MAX_DATA_BYTES} bytes in all` });

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
export const UpdateSecretBody = z
  .strictObject({
    description: Description.optional(),
    data: SecretData.optional(),
    tags: Tags.optional(),
    container_id: ContainerId.nullable().optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'at least one field to update is required' });
export type UpdateSecretBody = z.infer<typeof UpdateSecretBody>;

export const SecretParams = z.strictObject({ name: SecretName });

export const ListSecretsQuery = PageQuery;
export type ListSecretsQuery = z.infer<typeof ListSecretsQuery>;

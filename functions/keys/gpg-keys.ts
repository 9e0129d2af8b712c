import * as z from 'zod/v4';
import { keyFamilyHandlers } from '../../lib/keys/family.js';
import { exportGpgKey, generateGpgKey, getGpgKey, importGpgKey } from '../../lib/keys/gpg.js';
import { crossFieldRule } from '../../lib/schemas.js';
import { Description, Email, KeyName, KeyText, Passphrase, Tags, GpgKey, GpgKeyExport } from '../../lib/keys/schemas.js';

/**
 * /api/v1/gpg-keys. Scopes checked here: GET /{id} needs gpg:read; GET /{id}/export needs
 * gpg:read for the armored public key and gpg:read + export:read for `?private=true`.
 */
const TYPE = 'gpg_key';
const UidText = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[^<>\r\n()]*$/, 'no angle brackets, parentheses or line breaks');

const UserId = crossFieldRule(
  z.strictObject({ name: UidText.optional(), email: Email.optional(), comment: UidText.optional() }),
  (u) => u.name !== undefined || u.email !== undefined,
  { anyOf: [{ required: ['name'] }, { required: ['email'] }] },
  'a user id needs a name or an email',
);

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

export const { list, generate, importKey, get, exportKey, update, remove } = keyFamilyHandlers({
  type: TYPE,
  field: 'gpg_key',
  label: 'OpenPGP',
  schema: GpgKey,
  exportSchema: GpgKeyExport,
  generateBody: GenerateBody,
  importBody: ImportBody,
  generate: generateGpgKey,
  importKey: importGpgKey,
  get: getGpgKey,
  exportKey: exportGpgKey,
});

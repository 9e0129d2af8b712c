import * as z from 'zod/v4';
import { keyFamilyHandlers } from '../../lib/keys/family.js';
import { Description, KeyName, KeyText, Passphrase, Tags, SshKey, SshKeyExport } from '../../lib/keys/schemas.js';
import { exportSshKey, generateSshKey, getSshKey, importSshKey } from '../../lib/keys/ssh.js';

/**
 * /api/v1/ssh-keys. Scopes checked here: GET /{id} needs ssh:read (public parts only);
 * GET /{id}/export needs ssh:read for the public key and ssh:read + export:read for
 * `?private=true` (the OpenSSH private key).
 */
const TYPE = 'ssh_key';
const Comment = z
  .string()
  .max(256)
  .regex(/^[^\r\n]*$/, 'one line');

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

export const { list, generate, importKey, get, exportKey, update, remove } = keyFamilyHandlers({
  type: TYPE,
  field: 'ssh_key',
  label: 'SSH',
  schema: SshKey,
  exportSchema: SshKeyExport,
  generateBody: GenerateBody,
  importBody: ImportBody,
  generate: generateSshKey,
  importKey: importSshKey,
  get: getSshKey,
  exportKey: exportSshKey,
});

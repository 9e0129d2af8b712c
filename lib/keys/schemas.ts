import * as z from 'zod/v4';
import { Description, Tags } from '../schemas.js';

export { Description, Tags };
import { PageQuery } from '../schemas.js';

/** Fields shared by every key family's requests. */
export const KeyName = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9 ._@:+-]*$/, 'letters, digits, space, ".", "_", "@", ":", "+" and "-", starting with a letter or digit');
/** A PEM/armored/OpenSSH text block. */
export const KeyText = z
  .string()
  .min(1)
  .max(64 * 1024);
export const Passphrase = z.string().min(1).max(1024);

export const IdParams = z.strictObject({ id: z.uuid() });
export type IdParams = z.infer<typeof IdParams>;

export const ListQuery = PageQuery;
export type ListQuery = z.infer<typeof ListQuery>;

/** `PUT /{id}` on a key: metadata only (the key material of a key never changes). */
export const UpdateKeyBody = z
  .strictObject({ name: KeyName.optional(), description: Description.optional(), tags: Tags.optional() })
  .refine((b) => Object.keys(b).length > 0, { message: 'at least one field to update is required' });
export type UpdateKeyBody = z.infer<typeof UpdateKeyBody>;

const bool = z.enum(['true', 'false']).transform((v) => v === 'true');

/** `GET .../export?private=true`: the private part too (needs the export scopes). */
export const ExportQuery = z.strictObject({ private: bool.default(false) });
export const IncludePrivateQuery = z.strictObject({ include_private: bool.default(false) });

export const Email = z.email().max(254);
export const DnsName = z
  .string()
  .min(1)
  .max(253)
  .regex(/^(\*\.)?([A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/, 'a DNS name');

import * as z from 'zod/v4';
import { ScopeName } from '../auth/scope-names.js';

export const Name = z.string().trim().min(1).max(128);
export const Email = z
  .email()
  .max(254)
  .transform((e) => e.toLowerCase());

export const Scope = ScopeName;

export const CreateApiKeyBody = z.strictObject({
  name: Name,
  scopes: z.array(Scope).min(1).max(64),
  expires_at: z.iso
    .datetime({ offset: true })
    .refine((t) => Date.parse(t) > Date.now(), { message: 'must be in the future' })
    .optional(),
});
export type CreateApiKeyBody = z.infer<typeof CreateApiKeyBody>;

import * as z from 'zod/v4';
import { ScopeName } from '../../auth/scope-names.js';
import { Timestamp } from '../fields.js';
import type { TypeSpec } from '../model.js';

export const Scope = ScopeName;
const MAX_LIFETIME_DAYS = 366;
export const DEFAULT_LIFETIME_DAYS = 90;

export const CreateTokenBody = z.strictObject({
  name: z.string().trim().min(1).max(128),
  description: z.string().max(1024).optional(),
  scopes: z
    .array(Scope)
    .min(1)
    .max(64)
    .transform((s) => [...new Set(s)]),
  expires_at: Timestamp.refine((t) => Date.parse(t) > Date.now(), { message: 'must be in the future' })
    .refine((t) => Date.parse(t) <= Date.now() + MAX_LIFETIME_DAYS * 86_400_000, { message: `at most ${MAX_LIFETIME_DAYS} days ahead` })
    .optional(),
});
export type CreateTokenBody = z.infer<typeof CreateTokenBody>;

export const RotateTokenBody = z
  .strictObject({ grace_seconds: z.number().int().min(0).max(86_400).default(0) })
  .optional()
  .transform((b) => b ?? { grace_seconds: 0 });

/**
 * The type spec of personal API tokens, for
 * cross-type features and rendering; the tokens' own routes (api-tokens.ts) serve them.
 * Stored meta: prefix, scopes, expires_at and the token hashes (hidden, never rendered).
 */
export const apiToken: TypeSpec = {
  type: 'api_token',
  summary: 'A personal API token with scopes and an expiry; shown once, only its hash is stored.',
  fields: CreateTokenBody.omit({ name: true, description: true }),
  secret: [],
  update: 'merge',
  updateFields: z.strictObject({}),
  updateSemantics: 'No PUT: a token is created, rotated (POST /{id}/rotate) or deleted.',
  expires: 'expires_at',
  ownRoutes: true,
};

import * as z from 'zod/v4';
import { ScopeName } from '../../auth/scope-names.js';
import { ListPage } from '../../schemas.js';
import { Timestamp } from '../fields.js';
import { RESOURCE_BASE } from '../schemas.js';
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

/* Responses (lib/http/define-handler.ts `HandlerDoc`): what the API token routes answer. */

/** A token as the API shows it: never its hashes; `token` itself only in the create and rotate answers. */
const ApiTokenView = z.strictObject({
  ...RESOURCE_BASE,
  type: z.literal('api_token'),
  prefix: z.string().describe('The token’s first characters, to recognise it.'),
  scopes: z.array(z.string()).describe('The scopes the token carries.'),
  expires_at: Timestamp,
  expired: z.boolean().describe('Whether `expires_at` is past.'),
  previous_prefix: z.string().optional().describe('The replaced token’s prefix, after a rotation.'),
  previous_valid_until: Timestamp.optional().describe('Until when the replaced token still works (the rotation’s grace period).'),
  rotated_at: Timestamp.optional(),
});
/** The create and rotate answers: the token value, shown once. */
export const ApiTokenIssued = z.strictObject({
  api_token: ApiTokenView.extend({ token: z.string().describe('The token: shown in this answer only, store it now.') }),
});
export const ApiTokenAnswer = z.strictObject({ api_token: ApiTokenView });
export const ApiTokenList = ListPage('api_tokens', ApiTokenView);
export const ApiTokenDeleted = z.strictObject({
  deleted: z.literal(true),
  api_token: z.strictObject({ id: z.uuid(), name: z.string(), prefix: z.string() }),
});

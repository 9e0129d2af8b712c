import * as z from 'zod/v4';
import { ScopeName } from '../auth/scope-names.js';
import { atLeastOneField, crossFieldRule, Description, exactlyOneOf, ListPage, Timestamp } from '../schemas.js';

/** Request bodies of the federation stores (docs/api.md, "Federation"). */
const Name = z.string().trim().min(1).max(128);
const Issuer = z.string().min(1).max(1024);

// ---- JWK sets -------------------------------------------------------------------------

/** A claim pattern of a workload binding: the value exactly, `*` standing for any run of characters. */
const ClaimPattern = z.string().min(1).max(512);

/**
 * A workload binding (RFC 8693 token exchange, POST /api/v1/auth/workload/token): a JWT of
 * the set's issuer whose `sub` (and each named claim) matches gets these scopes for this
 * long. The first binding that matches applies.
 */
const WorkloadBinding = z.strictObject({
  name: Name.optional(),
  subject: ClaimPattern,
  claims: z
    .record(z.string().regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'a claim name'), ClaimPattern)
    .refine((c) => Object.keys(c).length <= 10, 'at most 10 claims')
    .default({}),
  scopes: z
    .array(ScopeName)
    .min(1)
    .max(50)
    .transform((a) => [...new Set(a)]),
  lifetime_seconds: z.number().int().min(60).max(3600).default(900),
});
export type WorkloadBinding = z.infer<typeof WorkloadBinding>;
/** Only an admin (admin:*) may write them, or change a set that has them (lib/federation/jwks.ts). */
const WorkloadBindings = z.array(WorkloadBinding).max(50);

/** A JWK set document, checked field by field in lib/federation/jwk.ts. */
const JwkSetDoc = z.looseObject({ keys: z.array(z.unknown()) });

export const CreateJwksBody = exactlyOneOf(
  z.strictObject({
    name: Name,
    description: Description.optional(),
    /** The `iss` whose tokens these keys verify (lib/federation/tokens.ts); unique in the account. */
    issuer: Issuer.nullable().optional(),
    jwks: JwkSetDoc.optional(),
    jwks_uri: z.string().min(1).max(2048).optional(),
    /** Include these keys in GET /api/v1/oidc/jwks/.well-known. */
    publish: z.boolean().optional(),
    workload_bindings: WorkloadBindings.optional(),
  }),
  ['jwks', 'jwks_uri'],
  'exactly one of jwks (inline) or jwks_uri is required',
  'jwks',
);
export type CreateJwksBody = z.infer<typeof CreateJwksBody>;

export const UpdateJwksBody = crossFieldRule(
  atLeastOneField(
    z.strictObject({
      name: Name.optional(),
      description: Description.optional(),
      issuer: Issuer.nullable().optional(),
      jwks: JwkSetDoc.optional(),
      jwks_uri: z.string().min(1).max(2048).optional(),
      publish: z.boolean().optional(),
      workload_bindings: WorkloadBindings.optional(),
      /** Fetch the URL again now, whatever its cache says. */
      refresh: z.literal(true).optional(),
    }),
  ),
  (b) => b.jwks === undefined || b.jwks_uri === undefined,
  { not: { required: ['jwks', 'jwks_uri'] } },
  'give jwks or jwks_uri, not both',
  'jwks',
);
export type UpdateJwksBody = z.infer<typeof UpdateJwksBody>;

// ---- OIDC clients ---------------------------------------------------------------------

const GRANT_TYPES = ['authorization_code', 'client_credentials', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'] as const;
/** `none`: a public client (a native or browser app that cannot keep a secret), authorization code with PKCE only. */
const AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'] as const;

/** A redirect URI: absolute, no fragment, https, or http only to a loopback host (RFC 8252 §7.3). */
const RedirectUri = z
  .string()
  .max(2048)
  .refine(
    (s) => {
      try {
        const u = new URL(s);
        if (u.hash || u.username || u.password) return false;
        if (u.protocol === 'https:') return true;
        return u.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(u.hostname);
      } catch {
        return false;
      }
    },
    { message: 'an absolute https URL without fragment or credentials (http only for localhost, 127.0.0.1, [::1])' },
  );

const OAuthScope = z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]{1,128}$/, 'an RFC 6749 scope token');

const clientFields = {
  name: Name,
  description: Description.optional(),
  redirect_uris: z
    .array(RedirectUri)
    .max(50)
    .transform((a) => [...new Set(a)]),
  grant_types: z
    .array(z.enum(GRANT_TYPES))
    .min(1)
    .transform((a) => [...new Set(a)]),
  token_endpoint_auth_method: z.enum(AUTH_METHODS),
  /** For private_key_jwt: the JWK set of this account holding the client's keys. */
  jwks_id: z.uuid().nullable(),
  scopes: z
    .array(OAuthScope)
    .max(100)
    .transform((a) => [...new Set(a)]),
};

const clientRules = <T extends { grant_types?: string[]; redirect_uris?: string[]; token_endpoint_auth_method?: string; jwks_id?: string | null }>(
  s: z.ZodType<T>,
) =>
  s.superRefine((b, ctx) => {
    if (b.grant_types?.includes('authorization_code') && b.redirect_uris !== undefined && b.redirect_uris.length === 0) {
      ctx.addIssue({ code: 'custom', path: ['redirect_uris'], message: 'authorization_code needs at least one redirect URI' });
    }
    if (b.token_endpoint_auth_method === 'none' && b.grant_types?.includes('client_credentials')) {
      ctx.addIssue({ code: 'custom', path: ['grant_types'], message: 'a public client (none) cannot use client_credentials: it has no credential' });
    }
    if (b.token_endpoint_auth_method === 'private_key_jwt' && b.jwks_id === null) {
      ctx.addIssue({ code: 'custom', path: ['jwks_id'], message: 'private_key_jwt needs the id of a JWK set of this account' });
    }
  });

export const CreateClientBody = clientRules(
  z.strictObject({
    ...clientFields,
    redirect_uris: clientFields.redirect_uris.default([]),
    token_endpoint_auth_method: clientFields.token_endpoint_auth_method.default('client_secret_basic'),
    jwks_id: clientFields.jwks_id.default(null),
    scopes: clientFields.scopes.default([]),
    description: Description.default(''),
  }),
);
export type CreateClientBody = z.infer<typeof CreateClientBody>;

export const UpdateClientBody = clientRules(
  atLeastOneField(
    z.strictObject({
      name: Name.optional(),
      description: Description.optional(),
      redirect_uris: clientFields.redirect_uris.optional(),
      grant_types: clientFields.grant_types.optional(),
      token_endpoint_auth_method: clientFields.token_endpoint_auth_method.optional(),
      jwks_id: clientFields.jwks_id.optional(),
      scopes: clientFields.scopes.optional(),
    }),
  ),
);
export type UpdateClientBody = z.infer<typeof UpdateClientBody>;

export const RotateSecretBody = z
  .strictObject({
    /** How long the previous secret stays valid, 0 (at once) to 30 days; default 1 day. */
    grace_seconds: z
      .number()
      .int()
      .min(0)
      .max(30 * 86_400)
      .default(86_400),
  })
  .default({ grace_seconds: 86_400 });
export type RotateSecretBody = z.infer<typeof RotateSecretBody>;

// ---- OIDC tokens ----------------------------------------------------------------------

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export const StoreTokenBody = z.strictObject({
  token: z
    .string()
    .max(16 * 1024)
    .regex(COMPACT_JWS, 'a compact JWS (header.payload.signature)'),
  description: Description.optional(),
});
export type StoreTokenBody = z.infer<typeof StoreTokenBody>;

export const RevokeTokenBody = z.strictObject({ reason: z.string().max(256).optional() }).default({});
export type RevokeTokenBody = z.infer<typeof RevokeTokenBody>;

// ---- responses ------------------------------------------------------------------------

const Version = z.int().min(1);
const CreatedBy = z.string().nullable();
const Deleted = z.literal(true);

/** A public JWK (RFC 7517): its members as given, never a private part. */
const PublicJwkSchema = z.looseObject({ kty: z.string(), kid: z.string().optional() });

/** RFC 7517 §5: a JWK set document. */
export const JwkSetDocument = z.object({ keys: z.array(PublicJwkSchema) });

const JwkSetMeta = z.object({
  id: z.uuid(),
  name: z.string(),
  description: z.string(),
  issuer: z.string().nullable().describe('The `iss` of the tokens the set verifies.'),
  source: z.enum(['inline', 'url']),
  jwks_uri: z.string().nullable(),
  kids: z.array(z.string()).describe('The key ids of the set.'),
  publish: z.boolean().describe('Whether the keys are in the account’s `.well-known` JWK set.'),
  fetched_at: Timestamp.nullable(),
  cache_until: Timestamp.nullable(),
  etag: z.string().nullable(),
  last_modified: z.string().nullable(),
  fetch_error: z.string().nullable().describe('The last refetch’s failure (the last good keys are kept).'),
  workload_bindings: z
    .array(WorkloadBinding)
    .describe('Which of the issuer’s tokens a workload may exchange, and for what (POST /api/v1/auth/workload/token).'),
  version: Version,
  created_at: Timestamp,
  updated_at: Timestamp,
  created_by: CreatedBy,
});
const JwkSetSchema = JwkSetMeta.extend({ keys: z.array(PublicJwkSchema) });
export const JwkSetPage = ListPage('jwks', JwkSetMeta, { paged: true });
export const JwkSetAnswer = z.object({ jwks: JwkSetSchema });
export const JwkSetDeleted = z.object({ deleted: Deleted, jwks: z.object({ id: z.uuid(), name: z.string() }) });

const OidcClientSchema = z.object({
  id: z.uuid(),
  client_id: z.string(),
  name: z.string(),
  description: z.string(),
  redirect_uris: z.array(z.string()),
  grant_types: z.array(z.string()),
  token_endpoint_auth_method: z.enum(AUTH_METHODS),
  jwks_id: z.uuid().nullable(),
  scopes: z.array(z.string()),
  secret_prefix: z.string().nullable().describe('The start of the current secret, to recognise it.'),
  secret_rotated_at: Timestamp.nullable(),
  previous_secret_expires_at: Timestamp.nullable().describe('Until then the previous secret is still accepted.'),
  version: Version,
  created_at: Timestamp,
  updated_at: Timestamp,
  created_by: CreatedBy,
});
const ClientSecret = z.string().describe('The client secret (`ocs_…`); shown in this response only.');
export const OidcClientPage = ListPage('clients', OidcClientSchema, { paged: true });
export const OidcClientAnswer = z.object({ client: OidcClientSchema });
export const OidcClientCreated = z.object({
  client: OidcClientSchema,
  client_secret: ClientSecret.nullable().describe('The client secret, shown once; null for a private_key_jwt client.'),
});
export const OidcClientUpdated = z.object({
  client: OidcClientSchema,
  client_secret: ClientSecret.optional().describe('Present when the update gave the client a new secret (shown once).'),
});
export const OidcClientRotated = z.object({
  client: OidcClientSchema,
  client_secret: ClientSecret,
  previous_secret_valid_until: Timestamp.nullable().describe('The previous secret’s grace period end; null: no grace.'),
});
export const OidcClientDeleted = z.object({ deleted: Deleted, client: z.object({ id: z.uuid(), name: z.string() }) });

const OidcTokenSchema = z.object({
  id: z.uuid(),
  description: z.string(),
  iss: z.string().nullable(),
  sub: z.string().nullable(),
  aud: z.array(z.string()),
  exp: z.string().nullable(),
  nbf: z.string().nullable(),
  iat: z.string().nullable(),
  jti: z.string().nullable(),
  alg: z.string().nullable(),
  kid: z.string().nullable(),
  verification: z.enum(['valid', 'invalid', 'unverified']).describe('The signature check against the account’s JWK set for the issuer, when stored.'),
  verification_error: z.string().nullable(),
  jwks_id: z.uuid().nullable(),
  revoked_at: Timestamp.nullable(),
  revoke_reason: z.string().nullable(),
  version: Version,
  created_at: Timestamp,
  updated_at: Timestamp,
  created_by: CreatedBy,
  status: z.enum(['active', 'revoked', 'expired']).describe('Computed on each read.'),
});
export const OidcTokenPage = ListPage('tokens', OidcTokenSchema, { paged: true });
export const OidcTokenAnswer = z.object({ token: OidcTokenSchema });
export const OidcTokenRead = z.object({
  token: OidcTokenSchema,
  raw_token: z.string().nullable().describe('The JWT; only while the token is active (null once revoked or expired).'),
});
export const OidcTokenDeleted = z.object({ deleted: Deleted, token: z.object({ id: z.uuid() }) });

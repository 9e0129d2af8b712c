import * as z from 'zod/v4';
import { ClientIdSchema, DeviceCodeSchema, UserCodeSchema } from '../auth/device-flow.js';
import { ListPage, PageQuery, Timestamp } from '../schemas.js';
import { GRANT_SERVICES } from './grants.js';

export const Uuid = z.uuid();
export const IdParams = z.strictObject({ id: Uuid });

export const ListQuery = PageQuery;
export type ListQuery = z.infer<typeof ListQuery>;

const Name = z.string().trim().min(1).max(128);

/** A JWK object (public members only; checked by lib/crypto/device-public-key.ts) or a PEM SPKI string. */
const PublicKey = z.union([
  z.string().min(1).max(4096),
  z.record(z.string().max(16), z.unknown()).refine((o) => Object.keys(o).length <= 16, 'too many JWK members'),
]);

/** An alias is one URL path segment: `/api/v1/agent/access/{alias}`. */
export const Alias = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" and "-", starting with a letter or digit');

const Grant = z.strictObject({
  alias: Alias,
  service: z.enum(GRANT_SERVICES),
  // exactly one resource: a UUID, never a pattern ("*", prefixes, lists)
  resource: z.uuid({ message: 'must be the UUID of one existing resource (wildcards and patterns are not accepted)' }),
});

export const ProfileBody = z
  .strictObject({
    name: Name,
    enabled: z.boolean(),
    grants: z.array(Grant).max(100),
  })
  .superRefine((body, ctx) => {
    const seen = new Set<string>();
    body.grants.forEach((g, i) => {
      if (seen.has(g.alias))
        ctx.addIssue({ code: 'custom', path: ['grants', i, 'alias'], message: `alias "${g.alias}" appears twice: aliases are unique per profile` });
      seen.add(g.alias);
    });
  });
export type ProfileBody = z.infer<typeof ProfileBody>;

export const CreateDeviceBody = z.strictObject({ name: Name, public_key: PublicKey, profile_id: Uuid });

/** RFC 6749 §2.2 / Appendix A.1: a client identifier is 1+ visible ASCII characters (VSCHAR). */
const ClientId = ClientIdSchema;

/**
 * RFC 8628 §3.1 device authorization request (form-encoded or JSON): `client_id` is the
 * public client's identifier (any; polls must repeat it), `public_key` a JWK object, a JWK
 * as a JSON string (form requests) or a PEM SPKI string.
 */
export const DeviceAuthorizationBody = z.strictObject({
  name: Name,
  public_key: PublicKey,
  profile_id: Uuid.optional(),
  client_id: ClientId.optional(),
});

/** RFC 8628 §3.4 device access token request; `grant_type`, when sent, must be the device-code grant. */
export const TokenBody = z.strictObject({
  device_code: DeviceCodeSchema,
  grant_type: z.string().max(255).optional(),
  client_id: ClientId.optional(),
});

/** The enrolment token in the body; `Authorization: Bearer <token>` (RFC 6750 §2.1) may carry it instead. */
export const EnrollBody = z.strictObject({ enrollment_token: z.string().min(16).max(128) }).optional();

export const ReviewBody = z.strictObject({ user_code: UserCodeSchema });

export const ApproveBody = z.strictObject({
  user_code: UserCodeSchema,
  decision: z.enum(['approve', 'deny']),
  profile_id: Uuid.optional(),
});

export const AliasParams = z.strictObject({ alias: Alias });

/** The access body: empty, or options of the granted service. */
export const AccessBody = z
  .strictObject({
    /** database.issue: requested lease lifetime (capped by the role's maximum). */
    ttl_seconds: z
      .number()
      .int()
      .min(1)
      .max(31 * 86400)
      .optional(),
  })
  .optional();

/* Responses */

const Service = z.enum(GRANT_SERVICES);
const Fingerprint = z
  .string()
  .regex(/^SHA256:/)
  .describe('`SHA256:` + the RFC 7638 thumbprint of the public key.');
const DeviceAlgorithm = z.enum(['ed25519', 'ecdsa-p256-sha256']);
const DevicePublicJwk = z.union([
  z.object({ kty: z.literal('OKP'), crv: z.literal('Ed25519'), x: z.string() }),
  z.object({ kty: z.literal('EC'), crv: z.literal('P-256'), x: z.string(), y: z.string() }),
]);

const DeviceSchema = z.object({
  id: z.uuid().describe('Also the key id of the device’s signatures.'),
  name: z.string(),
  profile_id: z.uuid(),
  algorithm: DeviceAlgorithm,
  public_key: DevicePublicJwk,
  fingerprint: Fingerprint,
  status: z.enum(['active', 'revoked']),
  enrolled_via: z.enum(['device_authorization', 'account_credentials']),
  created_at: Timestamp,
  created_by: z.string().nullable(),
  revoked_at: Timestamp.nullable(),
  revoked_by: z.string().nullable(),
});
export const DevicePage = ListPage('devices', DeviceSchema);
export const DeviceAnswer = z.object({ device: DeviceSchema });
export const DeviceRevoked = z.object({ device: DeviceSchema, note: z.string().describe('What revocation does not withdraw.') });

const ProfileSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  enabled: z.boolean(),
  grants: z.array(z.object({ alias: z.string(), service: Service, resource: z.uuid(), resource_type: z.string() })),
  version: z.int().min(1),
  created_at: Timestamp.nullable(),
  updated_at: Timestamp.nullable(),
  created_by: z.string().nullable(),
  updated_by: z.string().nullable(),
});
export const ProfilePage = ListPage('profiles', ProfileSchema);
export const ProfileAnswer = z.object({ profile: ProfileSchema });

/** RFC 8628 §3.2 device authorization response. */
export const DeviceAuthorizationResponse = z.object({
  device_code: z.string(),
  user_code: z.string(),
  verification_uri: z.string(),
  verification_uri_complete: z.string(),
  expires_in: z.int().min(1),
  interval: z.int().min(1),
});

/** RFC 8628 §3.5 / RFC 6749 §5.1 token response: the one-time enrolment token. */
export const DeviceTokenResponse = z.object({
  access_token: z.string().describe('The enrolment token: send it to /api/v1/agent/oauth/enroll (once).'),
  token_type: z.literal('Bearer'),
  expires_in: z.int().min(1),
});

export const Enrolled = z.object({
  device_id: z.uuid(),
  key_id: z.uuid().describe('The key id of the device’s request signatures (its device id).'),
  tenant_id: z.uuid(),
  profile_id: z.uuid(),
  device: DeviceSchema,
});

export const AuthorizationReview = z.object({
  authorization: z.object({
    user_code: z.string(),
    status: z.literal('pending'),
    device_name: z.string(),
    client_id: z.string().nullable(),
    key_fingerprint: Fingerprint,
    algorithm: DeviceAlgorithm,
    requested_profile: z.object({ id: z.uuid(), name: z.string().nullable(), exists: z.boolean(), enabled: z.boolean().nullable() }).nullable(),
    created_at: Timestamp,
    expires_at: Timestamp,
  }),
});

export const AuthorizationDecision = z.object({
  authorization: z.object({
    status: z.enum(['approved', 'denied']),
    device_name: z.string(),
    key_fingerprint: Fingerprint,
    profile_id: z.uuid().optional().describe('The profile the approved device gets.'),
  }),
});

export const Identity = z.object({
  identity: z.object({
    device_id: z.uuid(),
    name: z.string(),
    tenant_id: z.uuid(),
    algorithm: DeviceAlgorithm,
    profile: z.object({ id: z.uuid(), name: z.string(), enabled: z.boolean() }),
    grants: z.array(z.object({ alias: z.string(), service: Service, resource_type: z.string() })),
  }),
});

const GrantedResource = z.object({ type: z.string(), id: z.uuid(), name: z.string() });
const SecretAccess = z.object({
  alias: z.string(),
  service: z.literal('secret.read'),
  resource: GrantedResource.extend({ version: z.int().min(1) }),
  data: z.unknown().describe('The resource’s value (its sealed fields), or null.'),
  metadata: z.record(z.string(), z.unknown()),
  audit_id: z.string(),
});
const LeaseAccess = z.object({
  alias: z.string(),
  service: z.literal('database.issue'),
  resource: GrantedResource,
  lease: z.object({
    lease_id: z.string(),
    username: z.string(),
    password: z.string(),
    expires_at: Timestamp,
    ttl_seconds: z.int().min(1),
  }),
  audit_id: z.string(),
});
export const AccessAnswer = z.discriminatedUnion('service', [SecretAccess, LeaseAccess]);

export const ResolvedVariables = z.object({
  names: z.array(z.string()).describe('The names resolved, in first-use order.'),
  values: z.record(z.string(), z.string()).describe('NAME → value.'),
  result: z.string().optional().describe('The rendered template (template requests only).'),
  audit_id: z.string(),
});

import * as z from 'zod/v4';
import { ClientIdSchema, DeviceCodeSchema, UserCodeSchema } from '../../lib/auth/device-flow.js';
import { PageQuery } from '../../lib/schemas.js';
import { GRANT_SERVICES } from '../../lib/agents/grants.js';

export const Uuid = z.uuid();
export const IdParams = z.strictObject({ id: Uuid });

export const ListQuery = PageQuery;
export type ListQuery = z.infer<typeof ListQuery>;

const Name = z.string().trim().min(1).max(128);

/** A JWK object (public members only; checked by lib/agents/public-key.ts) or a PEM SPKI string. */
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

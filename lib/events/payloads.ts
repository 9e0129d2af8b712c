import { EVENT_TYPES } from '../outbox/catalogue.js';

/**
 * Payload shapes of the event catalogue (lib/outbox/catalogue.ts), as delivered to
 * webhooks. Every delivery body is the envelope
 *
 *     {"id": "<event id, UUIDv7 = the webhook-id header>", "type": "secret.created",
 *      "timestamp": "<ISO-8601 UTC, when the change committed>", "tenant_id": "<account>",
 *      "data": { ...the type's fields below... }}
 *
 * `data` carries ids and metadata only: never a secret value, key material, token or
 * password. A type is documented exactly or by its family (`credential.*`); a webhook
 * subscribes to exact types, families (`secret.*`) or everything (`*`).
 */
interface PayloadDoc {
  readonly description: string;
  /** Field name → type and meaning. */
  readonly data: Readonly<Record<string, string>>;
}

const resource = {
  id: 'string (UUID) — the resource id',
  type: 'string — the resource type (lib/catalog.ts), e.g. ssh_key',
  name: 'string — the resource name',
  version: 'integer — the version written (absent on delete)',
};

const EVENT_PAYLOADS: Readonly<Record<string, PayloadDoc>> = {
  'tenant.created': { description: 'an account was created', data: { id: 'string (UUID)', name: 'string' } },
  'tenant.activated': { description: 'an account was reactivated', data: { id: 'string (UUID)', status: '"active"' } },
  'tenant.suspended': { description: 'an account was suspended', data: { id: 'string (UUID)', status: '"suspended"' } },
  'tenant.quota_changed': {
    description: 'an operator changed the account quota',
    data: { id: 'string (UUID)', quota: 'object — the new quota values' },
  },
  'api_key.created': {
    description: 'an API key was created',
    data: { id: 'string (UUID)', name: 'string', prefix: 'string — public key prefix', scopes: 'string[]' },
  },
  'api_key.revoked': { description: 'an API key was revoked', data: { id: 'string (UUID)', name: 'string', prefix: 'string' } },
  'secret.*': { description: 'a generic secret was created, updated or deleted', data: { id: 'string (UUID)', name: 'string', version: 'integer' } },
  'credential.*': { description: 'a typed credential, key or other versioned resource was created, updated or deleted', data: resource },
  'key.*': { description: 'a managed key (signing, encryption) was created, updated, rotated or deleted', data: resource },
  'share.*': {
    description: 'a resource was shared with a user, or a share was revoked',
    data: {
      share_id: 'string (UUID)',
      type: 'string — the resource type',
      resource_id: 'string (UUID)',
      shared_with_email: 'string',
      permission: 'string',
    },
  },
  'temp_access.*': {
    description: 'a temporary access grant was created, redeemed or revoked',
    data: {
      grant_id: 'string (UUID)',
      type: 'string — the resource type',
      resource_id: 'string (UUID)',
      expires_at: 'string (ISO-8601)',
      single_use: 'boolean',
    },
  },
  'container.*': { description: 'a container was created, updated or deleted', data: { id: 'string (UUID)', name: 'string', version: 'integer' } },
  'history.*': {
    description: 'the kept-versions setting of a resource changed',
    data: { type: 'string', id: 'string (UUID)', keep_versions: 'integer', previous_keep_versions: 'integer', pruned_versions: 'integer[]' },
  },
  'variable.*': {
    description: 'a named variable (an alias of a credential field) was created, updated or deleted',
    data: { name: 'string', resource_id: 'string (UUID)', resource_type: 'string', field: 'string' },
  },
  'document.*': {
    description: 'a protected document was uploaded, or a grant on it was created or revoked',
    data: {
      id: 'string (UUID) — the document',
      name: 'string',
      grant_id: 'string (UUID) — grants only',
      grantee_email: 'string — grants only',
      expires_at: 'string (ISO-8601) — grants only',
    },
  },
  'oidc_client.*': {
    description: 'an OIDC client of the account was created, updated, deleted, or its secret rotated',
    data: {
      id: 'string (UUID) — the client id',
      name: 'string',
      grace_until: 'string (ISO-8601) — rotation only: the old secret is valid until then',
    },
  },
  'jwks.*': {
    description: 'a trusted JWK set was created, updated (also by a refetch of its URL) or deleted',
    data: { id: 'string (UUID)', name: 'string', issuer: 'string or null', kids: 'string[] — the key ids of the set' },
  },
  'oidc_token.*': {
    description: 'a token was stored, revoked, deleted, or found past its exp on a read (expired); never the token itself',
    data: { id: 'string (UUID)', iss: 'string or null', sub: 'string or null', jti: 'string or null', status: 'string — verification status' },
  },
  'saml_metadata.*': {
    description: 'SAML metadata was created, updated or deleted; certificate_expiring when one of its certificates nears expiry',
    data: { id: 'string (UUID)', entity_id: 'string', not_after: 'string (ISO-8601) — certificate_expiring only' },
  },
  'saml_assertion.*': {
    description: 'a verified SAML assertion was stored or deleted',
    data: { id: 'string (UUID)', assertion_id: 'string', issuer: 'string', metadata_id: 'string (UUID)' },
  },
  'lease.*': {
    description: 'a dynamic database credential lease was issued or revoked',
    data: {
      id: 'string (UUID) — the lease id',
      resource_id: 'string (UUID) — the database connection',
      role_id: 'string (UUID)',
      expires_at: 'string (ISO-8601)',
    },
  },
  'certificate.*': {
    description: 'a certificate was issued, renewed or revoked, or expires within the warning window',
    data: { id: 'string (UUID)', serial: 'string (hex)', subject: 'string', not_after: 'string (ISO-8601)', source: 'string' },
  },
  'agent.*': {
    description: 'a device was enrolled, approved, denied or revoked, changed profile, or acted (identity read, access, variables resolved)',
    data: { id: 'string (UUID) — the device id', name: 'string', profile_id: 'string (UUID), when relevant' },
  },
  'skey.*': {
    description: 'an S/KEY (RFC 2289) sequence was created or deleted, or its last one-time password was used (exhausted)',
    data: { id: 'string (UUID)', name: 'string', algorithm: '"md5" or "sha1"', sequence: 'integer — the count of the last accepted OTP' },
  },
  'timelock.*': {
    description:
      'a time-lock was created or released (its value read after the release time); break_glass_requested announces an early release after the delay, which an admin or the veto-share holders can veto (break_glass_vetoed)',
    data: {
      id: 'string (UUID)',
      name: 'string',
      release_at: 'string (ISO-8601) — the time-lock\u2019s release time',
      break_glass_release_at: 'string (ISO-8601) — break_glass_requested only: when the early release takes effect unless vetoed',
      reason: 'string — break-glass only: the reason given',
    },
  },
  'webhook.created': {
    description: 'a webhook subscription was created',
    data: { id: 'string (UUID)', url: 'string — scheme, host, port and path (no query)', events: 'string[]' },
  },
  'webhook.test': {
    description: 'POST /api/v1/webhooks/{id}/test: sent to that webhook only',
    data: { webhook_id: 'string (UUID)', message: 'string' },
  },
  'settings.updated': { description: 'account settings were changed', data: { changed: 'string[] — the names of the changed settings' } },
};

/** The documentation of an event type: exact, else by family; undefined when undocumented. */
export function payloadDoc(type: string): PayloadDoc | undefined {
  return EVENT_PAYLOADS[type] ?? EVENT_PAYLOADS[`${type.split('.')[0]}.*`];
}

/** The families of the catalogue, for subscription patterns like `secret.*`. */
const EVENT_FAMILIES: readonly string[] = [...new Set(EVENT_TYPES.map((t) => t.split('.')[0]!))];

/** Whether an event type matches a webhook's subscription list. */
export function subscribed(patterns: readonly string[], type: string): boolean {
  return patterns.some((p) => p === '*' || p === type || (p.endsWith('.*') && type.startsWith(p.slice(0, -1))));
}

/** A valid subscription pattern: `*`, a catalogue type, or a catalogue family with `.*`. */
export function isEventPattern(p: string): boolean {
  if (p === '*') return true;
  if (p.endsWith('.*')) return EVENT_FAMILIES.includes(p.slice(0, -2));
  return (EVENT_TYPES as readonly string[]).includes(p);
}

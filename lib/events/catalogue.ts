/**
 * The event catalogue: every event type the service emits. Payloads carry ids and
 * metadata, never values, keys or tokens.
 */
export const EVENT_TYPES = [
  'tenant.created',
  'tenant.activated',
  'tenant.suspended',
  'tenant.quota_changed',
  'api_key.created',
  'api_key.revoked',
  'secret.created',
  'secret.updated',
  'secret.deleted',
  // The rest of the catalogue (payload shapes: lib/events/payloads.ts); features emit these.
  'credential.created',
  'credential.updated',
  'credential.deleted',
  'share.created',
  'share.revoked',
  'temp_access.created',
  'temp_access.redeemed',
  'temp_access.revoked',
  'container.created',
  'container.updated',
  'container.deleted',
  'history.settings_changed',
  'lease.issued',
  'lease.revoked',
  // named variables (lib/variables)
  'variable.created',
  'variable.updated',
  'variable.deleted',
  'certificate.issued',
  'certificate.revoked',
  'certificate.expiring',
  // keys and certificates (functions/keys, functions/certificates)
  'certificate.renewed',
  'key.created',
  'key.updated',
  'key.deleted',
  'agent.enrolled',
  'agent.approved',
  'agent.revoked',
  // agents (lib/agents): the rest of the device lifecycle and every signed device action
  'agent.denied',
  'agent.profile_updated',
  'agent.identity_read',
  'agent.accessed',
  'agent.variables_resolved',
  'webhook.created',
  'webhook.test',
  'settings.updated',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

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
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

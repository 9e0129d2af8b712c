/**
 * The attributes the writes of a read-only route may touch (infra/grants.ts conditions the
 * tenant-access role's UpdateItem on them with `dynamodb:Attributes`):
 * - METERING_ATTRIBUTES: the rate-limit buckets and usage count of lib/ratelimit/bucket.ts
 *   (`<bucket>ts`, `<bucket>tok`, `<bucket>cap` with buckets `rl_` and `rl_<credential>_`,
 *   `requests`, `ttl`), as StringLike patterns: on every tenant role, in defence in depth, as
 *   the metering partition `METER#<tid>` is all `TenantMeter` reaches (lib/tenancy/meter.ts);
 * - AUDIT_ATTRIBUTES: one audit entry, as exact names: what the audit writer's PutItem may
 *   name (infra/grants.ts `auditWriterStatements`); it writes the entries read-only routes send
 *   to the audit queue (lib/audit/queue.ts), read-only routes themselves write none.
 * test/unit/tenancy.test.ts holds both lists to the items the code writes.
 */
export const METERING_ATTRIBUTES = ['pk', 'sk', 'rl_*', 'requests', 'ttl'] as const;

/**
 * The account's data-key record (lib/crypto/envelope.ts, `DEK#CURRENT`), which the first seal
 * of an account creates: a sealing route that writes nothing else may put only these.
 */
export const DATA_KEY_ATTRIBUTES = ['pk', 'sk', 'dek_id', 'wrapped', 'provider', 'created_at'] as const;

export const AUDIT_ATTRIBUTES = [
  'pk',
  'sk',
  'id',
  'at',
  'tenant_id',
  'actor',
  'action',
  'resource',
  'outcome',
  'request_id',
  'source_ip',
  'user_agent',
  'detail',
] as const;

/**
 * The attributes authentication reads of the account item (lib/store/tenants.ts
 * `readAccount`): the tenant entity's fields, never its keys or anything else stored on it.
 * The execution roles' `AccountRead` allows GetItem on tenant partitions only with these.
 */
export const ACCOUNT_ATTRIBUTES = ['id', 'name', 'admin_email', 'status', 'operator', 'quota', 'settings', 'created_at', 'updated_at'] as const;

/**
 * What the platform sets on an account item, never the account itself: the operator flag
 * (lib/operator) and the quota. Authentication trusts both (ACCOUNT_ATTRIBUTES), so no
 * tenant-access role may name them in a write (infra/grants.ts `TenantWrite`): a session of an
 * account cannot make its own account an operator or lift its own limits. IAM sees only names,
 * so these names are kept for the account item alone. One exception: PLAN_ATTRIBUTES.
 */
export const OPERATOR_ONLY_ATTRIBUTES = ['operator', 'quota'] as const;

/**
 * The quota a plan sets: the billing routes (grant `payment`, lib/billing/subscriptions.ts)
 * write it when the payment provider confirms a plan change, so their tenant-access role may
 * name it; the operator flag stays out of reach of every tenant session.
 */
export const PLAN_ATTRIBUTES = ['quota'] as const;

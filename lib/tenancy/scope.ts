import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The tenant scope of a request (docs/architecture.md, "Tenancy in IAM"). A request of a
 * tenant route (lib/routes.ts `tenancyOf`) runs inside a scope whose tenant becomes known
 * once authentication has read the credential that names it (`identifyTenant`); from then
 * on every DynamoDB and KMS call of the library (lib/store/client.ts `db()`, the envelope
 * key provider) goes through clients holding that tenant's credentials: an STS session
 * tagged `tenant_id`, whose role only reaches the partitions `T#<tenant>` and its metering
 * partition `METER#<tenant>` (lib/tenancy/meter.ts), the global lookups, and data keys whose
 * encryption context names the tenant. Before the tenant is known, the function's own
 * (narrow) role answers: the credential lookup and the account read.
 *
 * A scope names at most one tenant, once: authentication never switches it. The one way
 * to another account's credentials is `ownerScope`, a nested scope the share-aware reads
 * enter after the share (or document grant) check passed, for the owner-side calls only.
 */
interface TenantCell {
  tenantId?: string;
}

const als = new AsyncLocalStorage<TenantCell>();

export class TenantScopeViolation extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TenantScopeViolation';
  }
}

/** Runs `fn` in a scope whose tenant authentication names later (identifyTenant). */
export function tenantScope<T>(fn: () => T): T {
  return als.run({}, fn);
}

/** Runs `fn` in the scope of `tenantId` (known now: a worker acting for one tenant, a test). */
export function withTenant<T>(tenantId: string, fn: () => T): T {
  if (!tenantId) throw new TenantScopeViolation('a tenant scope needs a tenant id');
  return als.run({ tenantId }, fn);
}

/**
 * Authentication names the request's tenant: the scope's calls use that tenant's credentials
 * from now on. Outside a scope (operator, self-authenticating and background functions) it
 * does nothing; naming a second, different tenant is refused.
 */
export function identifyTenant(tenantId: string): void {
  const cell = als.getStore();
  if (!cell) return;
  if (cell.tenantId === undefined) cell.tenantId = tenantId;
  else if (cell.tenantId !== tenantId) throw new TenantScopeViolation('a request cannot act for two tenants');
}

/**
 * Runs `fn` with the credentials of `ownerTenantId`, the account owning a resource the
 * request's tenant reaches through a share or a document grant (lib/sharing/access.ts,
 * lib/documents/access.ts): a nested scope the domain code enters only once the share or
 * grant item (a global lookup item, read with the request tenant's credentials) has proved
 * the access, and which ends when `fn` settles; the request's own tenant is back after it.
 * The same tenant-access role serves (its session tagged with the owner's id), so the
 * owner-side calls reach only the owner's partition and data keys. For the request's own
 * tenant, or outside any scope (workers, operator and self-authenticating routes), it just
 * runs `fn`; before authentication named the request's tenant it is refused.
 */
export function ownerScope<T>(ownerTenantId: string, fn: () => T): T {
  const cell = als.getStore();
  if (!cell || cell.tenantId === ownerTenantId) return fn();
  if (!ownerTenantId) throw new TenantScopeViolation('an owner scope needs a tenant id');
  if (cell.tenantId === undefined) throw new TenantScopeViolation('an owner scope needs an authenticated request');
  return als.run({ tenantId: ownerTenantId }, fn);
}

/** The current scope: absent outside one; `tenantId` undefined until authentication named it. */
export function currentScope(): { readonly tenantId?: string } | undefined {
  return als.getStore();
}

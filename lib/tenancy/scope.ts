import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The tenant scope of a request (docs/architecture.md, "Tenancy in IAM"). A request of a
 * tenant route (lib/routes.ts `tenancyOf`) runs inside a scope whose tenant becomes known
 * once authentication has read the credential that names it (`identifyTenant`); from then
 * on every DynamoDB and KMS call of the library (lib/store/client.ts `db()`, the envelope
 * key provider) goes through clients holding that tenant's credentials: an STS session
 * tagged `tenant_id`, whose role only reaches partitions `T#<tenant>` and data keys whose
 * encryption context names the tenant. Before the tenant is known, the function's own
 * (narrow) role answers: the credential lookup and the account read.
 *
 * A scope names at most one tenant, once: a request never switches tenants.
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

/** The current scope: absent outside one; `tenantId` undefined until authentication named it. */
export function currentScope(): { readonly tenantId?: string } | undefined {
  return als.getStore();
}

import { commit } from '../audit/audit.js';
import type { CallContext } from '../auth/principal.js';
import { listTenants as list } from '../store/tenants.js';
import { type NewTenant, tenantCreatedChange, tenantItems } from './accounts.js';
import type { CreateTenantBody } from './schemas.js';

export async function createTenant(ctx: CallContext, body: CreateTenantBody): Promise<NewTenant> {
  const { items, result } = tenantItems(body);
  await commit(ctx, result.tenant.id, items, tenantCreatedChange(result.tenant));
  return result;
}

export const listTenants = list;

export { setTenantQuota, setTenantStatus } from './tenants.js';

import { commit } from '../../lib/audit/audit.js';
import type { CallContext } from '../../lib/auth/principal.js';
import { listTenants as list } from '../../lib/store/tenants.js';
import { type NewTenant, tenantCreatedChange, tenantItems } from '../../lib/operator/accounts.js';
import type { CreateTenantBody } from './schemas.js';

export async function createTenant(ctx: CallContext, body: CreateTenantBody): Promise<NewTenant> {
  const { items, result } = tenantItems(body);
  await commit(ctx, result.tenant.id, items, tenantCreatedChange(result.tenant));
  return result;
}

export const listTenants = list;

export { setTenantQuota, setTenantStatus } from '../../lib/operator/tenants.js';

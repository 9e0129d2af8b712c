import { defineHandler, ok, created } from '../../lib/http/index.js';
import { listPage } from '../../lib/schemas.js';
import { CreateTenantBody, ListTenantsQuery, QuotaBody, TenantParams } from './schemas.js';
import { createTenant, listTenants, setTenantQuota, setTenantStatus } from './service.js';

export const list = defineHandler({
  query: ListTenantsQuery,
  async handler({ query }) {
    const page = await listTenants(query.limit, query.cursor);
    return ok(listPage('tenants', page.tenants, page.cursor));
  },
});

/** Creates an account and its first admin API key, shown once. */
export const create = defineHandler({
  body: CreateTenantBody,
  async handler({ ctx, body }) {
    return created(await createTenant(ctx, body));
  },
});

export const activate = defineHandler({
  params: TenantParams,
  async handler({ ctx, params }) {
    return ok({ tenant: await setTenantStatus(ctx, params.id, 'active') });
  },
});

export const suspend = defineHandler({
  params: TenantParams,
  async handler({ ctx, params }) {
    return ok({ tenant: await setTenantStatus(ctx, params.id, 'suspended') });
  },
});

export const setQuota = defineHandler({
  params: TenantParams,
  body: QuotaBody,
  async handler({ ctx, params, body }) {
    return ok({ tenant: await setTenantQuota(ctx, params.id, body) });
  },
});

import { defineHandler, ok, created } from '../../lib/http/index.js';
import { listPage, NoFieldsBody } from '../../lib/schemas.js';
import { CreateTenantBody, ListTenantsQuery, QuotaBody, TenantAnswer, TenantCreated, TenantPage, TenantParams } from '../../lib/operator/schemas.js';
import { createTenant, listTenants, setTenantQuota, setTenantStatus } from '../../lib/operator/service.js';

export const list = defineHandler({
  summary: 'List accounts',
  responses: { 200: TenantPage },
  errors: ['bad_request'],
  query: ListTenantsQuery,
  async handler({ query }) {
    const page = await listTenants(query.limit, query.cursor);
    return ok(listPage('tenants', page.tenants, page.cursor));
  },
});

/** Creates an account and its first admin API key, shown once. */
export const create = defineHandler({
  summary: 'Create an account',
  description: 'Creates the account and its first admin API key, which is in this response only.',
  responses: { 201: TenantCreated },
  body: CreateTenantBody,
  async handler({ ctx, body }) {
    return created(await createTenant(ctx, body));
  },
});

export const activate = defineHandler({
  summary: 'Reactivate an account',
  responses: { 200: TenantAnswer },
  errors: ['not_found'],
  params: TenantParams,
  body: NoFieldsBody,
  async handler({ ctx, params }) {
    return ok({ tenant: await setTenantStatus(ctx, params.id, 'active') });
  },
});

export const suspend = defineHandler({
  summary: 'Suspend an account',
  description:
    'Every credential of the account is refused (403 `tenant_suspended`) until it is reactivated. An operator cannot suspend its own account.',
  responses: { 200: TenantAnswer },
  errors: ['not_found', 'self_suspension'],
  params: TenantParams,
  body: NoFieldsBody,
  async handler({ ctx, params }) {
    return ok({ tenant: await setTenantStatus(ctx, params.id, 'suspended') });
  },
});

export const setQuota = defineHandler({
  summary: 'Set an account’s quota',
  description: 'Each value given replaces that limit; the others are kept.',
  responses: { 200: TenantAnswer },
  errors: ['not_found'],
  params: TenantParams,
  body: QuotaBody,
  async handler({ ctx, params, body }) {
    return ok({ tenant: await setTenantQuota(ctx, params.id, body) });
  },
});

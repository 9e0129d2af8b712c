import * as z from 'zod/v4';
import { Limit as PageLimit, OptionalCursor } from '../../lib/schemas.js';
import { Email, Name } from '../../lib/account/schemas.js';
import { Uuid } from '../../lib/schemas.js';

const Limit = z.number().int().min(0).max(100_000_000);

export const QuotaBody = z
  .strictObject({
    max_secrets: Limit.optional(),
    max_api_keys: Limit.optional(),
    max_webhooks: Limit.optional(),
    max_devices: Limit.optional(),
    requests_per_minute: Limit.min(1).optional(),
    requests_per_minute_per_credential: Limit.min(1).optional(),
  })
  .refine((q) => Object.keys(q).length > 0, { message: 'at least one quota value is required' });
export type QuotaBody = z.infer<typeof QuotaBody>;

export const CreateTenantBody = z.strictObject({
  name: Name,
  admin_email: Email,
  quota: QuotaBody.optional(),
});
export type CreateTenantBody = z.infer<typeof CreateTenantBody>;

export const TenantParams = z.strictObject({ id: Uuid });

export const ListTenantsQuery = z.strictObject({
  limit: PageLimit(),
  cursor: OptionalCursor,
});

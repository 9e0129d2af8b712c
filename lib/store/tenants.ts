import { entity } from './entity.js';
import * as z from 'zod/v4';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { badRequest } from '../core/errors.js';
import { db, serviceDb, tableName } from './client.js';
import { keys } from './keys.js';
import { getMany } from './pagination.js';
import { mergeShards } from './shards.js';
import { ACCOUNT_ATTRIBUTES } from '../tenancy/attributes.js';

export type TenantStatus = 'active' | 'suspended';

/** Quota values; absent = unlimited. */
export interface Quota {
  readonly max_secrets?: number;
  readonly max_api_keys?: number;
  readonly max_webhooks?: number;
  readonly max_devices?: number;
  readonly requests_per_minute?: number;
  /** Per credential (API key, token, device) within the account; absent = the account's rate. */
  readonly requests_per_minute_per_credential?: number;
}

export const DEFAULT_QUOTA: Quota = { max_secrets: 10_000, max_api_keys: 100, max_webhooks: 25, max_devices: 1_000, requests_per_minute: 6_000 };

export interface Tenant {
  readonly id: string;
  readonly name: string;
  readonly admin_email: string;
  readonly status: TenantStatus;
  /** A platform-operator account: its admin keys may use the operator routes. */
  readonly operator: boolean;
  readonly quota: Quota;
  /** Account settings set with PUT /api/v1/settings (lib/settings/settings.ts); absent = defaults. */
  readonly settings?: Readonly<Record<string, unknown>>;
  readonly created_at: string;
  readonly updated_at: string;
}

const TenantItem = entity(
  'tenant',
  z.object({
    id: z.string(),
    name: z.string(),
    admin_email: z.string(),
    status: z.enum(['active', 'suspended']),
    operator: z.boolean().default(false),
    quota: z.record(z.string(), z.number()),
    settings: z.record(z.string(), z.unknown()).optional(),
    created_at: z.string(),
    updated_at: z.string(),
  }),
);

/** The entity's fields (what the account read projects: lib/tenancy/attributes.ts). */
export const TENANT_FIELDS: readonly string[] = TenantItem.fields;

const toTenant = (item: Record<string, unknown>): Tenant => TenantItem.parse(item) as Tenant;

/**
 * The account check of authentication, on the function's own credentials (before the
 * tenant's session is needed): one consistent GetItem projecting ACCOUNT_ATTRIBUTES, the only
 * read of a tenant partition the execution roles allow (infra/grants.ts, `AccountRead`).
 */
export async function readAccount(tenantId: string): Promise<Tenant | undefined> {
  const names = Object.fromEntries(ACCOUNT_ATTRIBUTES.map((f, i) => [`#a${i}`, f]));
  const out = await serviceDb().send(
    new GetCommand({
      TableName: tableName(),
      Key: keys.tenant(tenantId),
      ConsistentRead: true,
      ProjectionExpression: Object.keys(names).join(', '),
      ExpressionAttributeNames: names,
    }),
  );
  return out.Item ? toTenant(out.Item) : undefined;
}

export async function getTenant(tenantId: string): Promise<Tenant | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.tenant(tenantId), ConsistentRead: true }));
  return out.Item ? toTenant(out.Item) : undefined;
}

function decodeTenantCursor(cursor: string): string {
  try {
    const key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Record<string, unknown>;
    // `gsi1sk`: the cursor's name from before the listings moved to their own index
    if (typeof key.gsi1sk === 'string' && Object.keys(key).length === 1) return key.gsi1sk;
  } catch {
    // fall through
  }
  throw badRequest('invalid cursor', [{ path: 'query.cursor', message: 'not a cursor returned by this list' }]);
}

/** One page of the TENANTS listing (keys only, its shards merged): the account items' partition keys, in creation order. */
async function tenantListingPage(limit: number, after?: string): Promise<{ pks: string[]; cursor?: string }> {
  const items: Record<string, unknown>[] = [];
  // one more than the page: whether a next page exists
  for await (const item of mergeShards(keys.tenantIndexPks, {}, { pageSize: limit + 1, ...(after ? { after: decodeTenantCursor(after) } : {}) })) {
    // only the account items' entries (defence in depth: no tenant session may name the
    // listing's attributes, infra/grants.ts, but an entry left by an older release could)
    if (item.sk !== keys.tenant('').sk) continue;
    items.push(item);
    if (items.length > limit) break;
  }
  const page = items.slice(0, limit);
  const last = page.at(-1);
  return {
    pks: page.map((i) => i.pk as string),
    cursor: items.length > limit && last ? Buffer.from(JSON.stringify({ gsi1sk: last.platsk })).toString('base64url') : undefined,
  };
}

/** Tenants in creation order, through the TENANTS listing's shards (keys only, merged) and a batch read. */
export async function listTenants(limit: number, after?: string): Promise<{ tenants: Tenant[]; cursor?: string }> {
  const { pks, cursor } = await tenantListingPage(limit, after);
  const found = new Map((await getMany(pks.map((pk) => ({ pk, sk: 'TENANT' })))).map((item) => [item.pk as string, toTenant(item)]));
  return { tenants: pks.map((pk) => found.get(pk)).filter((t): t is Tenant => t !== undefined), ...(cursor ? { cursor } : {}) };
}

/**
 * The ids of the accounts in creation order, from the TENANTS listing alone: what a worker
 * that acts for each account in its own tenant session needs (functions/certificates/expiry.ts),
 * without reading any account item with its own role.
 */
export async function listTenantIds(limit: number, after?: string): Promise<{ ids: string[]; cursor?: string }> {
  const { pks, cursor } = await tenantListingPage(limit, after);
  return { ids: pks.map((pk) => pk.slice('T#'.length)), ...(cursor ? { cursor } : {}) };
}

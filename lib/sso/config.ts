import * as z from 'zod/v4';
import { commit } from '../audit/audit.js';
import type { CallContext } from '../auth/principal.js';
import { ScopeName } from '../auth/scope-names.js';
import { seal } from '../crypto/envelope.js';
import { notFound } from '../core/errors.js';
import { nowIso } from '../ids.js';
import { tableName } from '../store/client.js';
import { entity, nullable } from '../store/entity.js';
import { keys } from '../store/keys.js';
import { getTenant } from '../store/tenants.js';
import { readSsoConfigItem } from './store.js';

/**
 * An account's single sign-on through its own OpenID Connect provider (item `T#<tid>` /
 * `SSO`): issuer, client id, the client secret sealed with the account's data key (AAD:
 * tenant, `sso_client_secret`, the client id), the e-mail domains admitted, and how the ID
 * token's claims map to scopes. Set by the platform operator.
 */
const Domain = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, 'an e-mail domain such as example.com');

export const SsoBody = z.strictObject({
  issuer: z.url({ protocol: /^https?$/ }).max(512),
  client_id: z.string().min(1).max(256),
  client_secret: z.string().min(1).max(512),
  allowed_domains: z.array(Domain).min(1).max(50),
  /** Scopes every admitted user gets. */
  default_scopes: z.array(ScopeName).max(50).default([]),
  /** A claim (a string, or an array of strings such as `groups`) that has `value` grants `scopes`. */
  claim_mappings: z
    .array(z.strictObject({ claim: z.string().min(1).max(128), value: z.string().min(1).max(256), scopes: z.array(ScopeName).min(1).max(50) }))
    .max(50)
    .default([]),
});
export type SsoBody = z.infer<typeof SsoBody>;

const SsoItem = z.object({
  issuer: z.string(),
  client_id: z.string(),
  client_secret: z.instanceof(Uint8Array),
  allowed_domains: z.array(z.string()),
  default_scopes: z.array(z.string()),
  claim_mappings: z.array(z.object({ claim: z.string(), value: z.string(), scopes: z.array(z.string()) })),
  updated_at: z.string(),
  created_at: nullable(z.string()),
});
export type SsoConfig = z.output<typeof SsoItem>;
const configs = entity('sso configuration', SsoItem);

export const secretScope = (tenantId: string, clientId: string) => ({ tenantId, type: 'sso_client_secret', id: clientId, version: 1 });

export async function getSsoConfig(tenantId: string): Promise<SsoConfig | undefined> {
  const item = await readSsoConfigItem(tenantId);
  return item ? configs.parse(item) : undefined;
}

const view = (c: Omit<SsoConfig, 'client_secret' | 'created_at'>) => ({
  issuer: c.issuer,
  client_id: c.client_id,
  client_secret_set: true,
  allowed_domains: c.allowed_domains,
  default_scopes: c.default_scopes,
  claim_mappings: c.claim_mappings,
  updated_at: c.updated_at,
});

export async function putSsoConfig(ctx: CallContext, tenantId: string, body: SsoBody) {
  if (!(await getTenant(tenantId))) throw notFound('tenant');
  const at = nowIso();
  // stored exactly as the provider names itself (OIDC Discovery §4.3 compares the document's issuer to it as a string; Auth0-style issuers end in `/`)
  const issuer = body.issuer;
  const item = {
    issuer,
    client_id: body.client_id,
    client_secret: await seal(secretScope(tenantId, body.client_id), body.client_secret),
    allowed_domains: [...new Set(body.allowed_domains)],
    default_scopes: body.default_scopes,
    claim_mappings: body.claim_mappings,
    updated_at: at,
  };
  await commit(
    ctx,
    tenantId,
    [
      {
        Update: {
          TableName: tableName(),
          Key: keys.ssoConfig(tenantId),
          UpdateExpression:
            'SET issuer = :i, client_id = :c, client_secret = :s, allowed_domains = :d, default_scopes = :ds, claim_mappings = :m, updated_at = :at, created_at = if_not_exists(created_at, :at)',
          ExpressionAttributeValues: {
            ':i': item.issuer,
            ':c': item.client_id,
            ':s': item.client_secret,
            ':d': item.allowed_domains,
            ':ds': item.default_scopes,
            ':m': item.claim_mappings,
            ':at': at,
          },
        },
      },
    ],
    {
      action: 'sso.configure',
      resource: { type: 'sso', id: tenantId },
      detail: { issuer, client_id: body.client_id, allowed_domains: item.allowed_domains },
    },
  );
  return view(item);
}

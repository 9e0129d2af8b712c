import { secretReadScopes } from '../catalog.js';
import type { CallContext, Principal } from '../auth/principal.js';
import { requireScopes } from '../auth/scopes.js';
import { commit } from '../audit/audit.js';
import { config } from '../config.js';
import { badRequest, conflict, forbidden, HttpError, notFound, validationFailed } from '../core/errors.js';
import { accountSettings, TEMP_ACCESS_DEFAULT_MAX_SECONDS } from '../settings/settings.js';
import { newId, nowIso } from '../ids.js';
import { readHead, typeOrNotFound } from './heads.js';
import {
  grantById,
  grantByToken,
  grantItems,
  grantsOf,
  grantStatus,
  newTempToken,
  redeemItems,
  revokeItems,
  type Grant,
  type GrantStatus,
} from './store/temp-access.js';
import { resourceView } from './views.js';
import { tableName } from '../store/client.js';
import { actorName, openSecret } from '../resources/store.js';
import { getTenant } from '../store/tenants.js';
import { TxConditionFailed } from '../store/tx.js';
import { TEMP_TOKEN_RE, type CreateTempAccessBody } from './schemas.js';
import { identifyTenant } from '../tenancy/scope.js';

const grantView = (g: Grant, now = Date.now()) => ({
  id: g.id,
  type: g.type,
  resource_id: g.resource_id,
  resource_name: g.resource_name,
  single_use: g.single_use,
  expires_at: g.expires_at,
  status: grantStatus(g, now),
  uses: g.uses,
  created_at: g.created_at,
  created_by: g.created_by,
  revoked_at: g.revoked_at ?? null,
  first_used_at: g.first_used_at ?? null,
  last_used_at: g.last_used_at ?? null,
});

/** The absolute base of the redemption URL: PUBLIC_BASE_URL, else the request's own host. */
export function publicBase(headers: Readonly<Record<string, string>>): string {
  const configured = config().PUBLIC_BASE_URL;
  if (configured) return configured.replace(/\/+$/, '');
  const host = headers.host;
  if (!host || !/^[A-Za-z0-9.-]+(:\d+)?$/.test(host)) return '';
  return `${headers['x-forwarded-proto'] === 'http' ? 'http' : 'https'}://${host}`;
}

/**
 * Creates a temporary grant on one of the caller's resources: the caller must be able to
 * read it (its account: 404 otherwise; the type's read scope: 403). The token is returned
 * once, inside the URL; only its hash is stored.
 */
export async function createTempAccess(ctx: CallContext, type: string, id: string, body: CreateTempAccessBody, base: string) {
  const rt = typeOrNotFound(type);
  const tid = ctx.principal.tenantId;
  const head = await readHead(tid, type, id);
  if (!head) throw notFound(type.replace(/_/g, ' '));
  requireScopes(ctx.principal, secretReadScopes(rt));
  if (type === 'container') {
    throw badRequest('a container has no value to hand out: grant access to the resources in it', [
      { path: 'params.type', message: 'not for containers' },
    ]);
  }
  const max = accountSettings(ctx.principal.tenant).temp_access_max_seconds;
  if (body.duration_seconds > max) {
    throw validationFailed([
      {
        path: 'body.duration_seconds',
        message: `at most ${max} seconds: the account setting temp_access_max_seconds (default ${TEMP_ACCESS_DEFAULT_MAX_SECONDS}) caps temporary access; ask an administrator to raise it with PUT /api/v1/settings`,
      },
    ]);
  }
  const { token, hash } = newTempToken();
  const now = Date.now();
  const expiresMs = now + body.duration_seconds * 1000;
  const grant: Grant = {
    id: newId(),
    tenant_id: tid,
    type,
    resource_id: id,
    resource_name: head.record.name,
    single_use: body.single_use,
    expires_at: new Date(expiresMs).toISOString(),
    expires_ms: expiresMs,
    uses: 0,
    created_at: new Date(now).toISOString(),
    created_by: actorName(ctx),
    token_hash: hash,
  };
  const items = [
    ...grantItems(grant),
    { ConditionCheck: { TableName: tableName(), Key: head.key, ConditionExpression: 'id = :id', ExpressionAttributeValues: { ':id': id } } },
  ];
  try {
    await commit(ctx, tid, items, {
      action: 'temp_access.create',
      resource: { type, id, name: head.record.name },
      detail: { grant_id: grant.id, expires_at: grant.expires_at, single_use: grant.single_use, duration_seconds: body.duration_seconds },
      event: {
        type: 'temp_access.created',
        data: { grant_id: grant.id, type, resource_id: id, expires_at: grant.expires_at, single_use: grant.single_use },
      },
    });
  } catch (error) {
    if (error instanceof TxConditionFailed && error.index === 3) throw notFound(type.replace(/_/g, ' '));
    throw error;
  }
  const path = `/api/v1/t/${token}`;
  return { grant: grantView(grant, now), url: `${base}${path}`, token };
}

export async function listTempAccess(ctx: CallContext, type: string, id: string) {
  typeOrNotFound(type);
  const tid = ctx.principal.tenantId;
  if (!(await readHead(tid, type, id))) throw notFound(type.replace(/_/g, ' '));
  const now = Date.now();
  const grants = (await grantsOf(tid, type, id)).map((g) => grantView(g, now));
  return { grants, total: grants.length };
}

/** Revokes a grant (idempotent: revoking a revoked grant answers it as it is). */
export async function revokeTempAccess(ctx: CallContext, grantId: string) {
  const tid = ctx.principal.tenantId;
  const grant = await grantById(tid, grantId);
  if (!grant) throw notFound('temporary access grant');
  if (grant.revoked_at) return grantView(grant);
  const at = nowIso();
  try {
    await commit(ctx, tid, revokeItems(grant, at, actorName(ctx)), {
      action: 'temp_access.revoke',
      resource: { type: grant.type, id: grant.resource_id, name: grant.resource_name },
      detail: { grant_id: grant.id },
      event: { type: 'temp_access.revoked', data: { grant_id: grant.id, type: grant.type, resource_id: grant.resource_id } },
    });
  } catch (error) {
    if (!(error instanceof TxConditionFailed)) throw error;
    const now = await grantById(tid, grantId);
    if (!now) throw notFound('temporary access grant');
    return grantView(now);
  }
  return grantView({ ...grant, revoked_at: at, revoked_by: actorName(ctx) });
}

const GONE: Record<Exclude<GrantStatus, 'active'>, string> = {
  expired: 'this temporary access has expired',
  revoked: 'this temporary access was revoked',
  used: 'this single-use temporary access was already redeemed',
};

/** 410 for a token that was issued but no longer works; the code says why. */
const gone = (status: Exclude<GrantStatus, 'active'>) => new HttpError(410, `temp_access_${status}`, GONE[status]);

interface RequestFacts {
  readonly requestId: string;
  readonly sourceIp: string | null;
  readonly userAgent: string | null;
}

/**
 * Redeems a temporary token (GET /api/v1/t/{token}: the token is the only credential). A
 * token never issued (or removed after its retention) is a 404; one that expired, was
 * revoked or was already used (single-use) is a 410. The use is counted in a conditional
 * transaction with the audit entry (actor `temp_token`, the grant id) and the event, so a
 * single-use token yields its value once even under concurrent redemptions.
 */
export async function redeemTempAccess(token: string, facts: RequestFacts) {
  if (!TEMP_TOKEN_RE.test(token)) throw notFound('temporary access');
  for (let attempt = 0; attempt < 5; attempt++) {
    const grant = await grantByToken(token);
    if (!grant) throw notFound('temporary access');
    // the token is the credential: from here on every call uses the tenant session of the
    // account it names (a tenant route, lib/routes.ts tenancyOf), never the function's own role
    identifyTenant(grant.tenant_id);
    const now = Date.now();
    const status = grantStatus(grant, now);
    if (status !== 'active') throw gone(status);
    const tenant = await getTenant(grant.tenant_id);
    if (!tenant) throw notFound('temporary access');
    if (tenant.status !== 'active') throw forbidden('account is suspended', 'tenant_suspended');
    const head = await readHead(grant.tenant_id, grant.type, grant.resource_id);
    if (!head) throw notFound(grant.type.replace(/_/g, ' '));
    // opened before the use is counted, returned only once it is
    const data = await openSecret<unknown>(grant.tenant_id, head.record, head.sealed);
    const principal: Principal = { kind: 'temp_token', tenantId: grant.tenant_id, tenant, id: grant.id, user: null, scopes: [], operator: false };
    const ctx: CallContext = { principal, ...facts };
    try {
      await commit(ctx, grant.tenant_id, redeemItems(grant, now), {
        action: 'temp_access.redeem',
        resource: { type: grant.type, id: grant.resource_id, name: head.record.name },
        detail: { grant_id: grant.id, version: head.record.version, use: grant.uses + 1 },
        event: {
          type: 'temp_access.redeemed',
          data: { grant_id: grant.id, type: grant.type, resource_id: grant.resource_id, version: head.record.version },
        },
      });
    } catch (error) {
      // a concurrent redemption or revocation: read the grant again (410 when it no longer works)
      if (error instanceof TxConditionFailed) continue;
      throw error;
    }
    const used = { ...grant, uses: grant.uses + 1 };
    return { resource: resourceView(head.record), data: data ?? null, grant: grantView(used, now) };
  }
  throw conflict('temporary access is being redeemed concurrently; retry', 'conflict');
}

import type { Tenant } from '../store/tenants.js';

/**
 * Who is calling, after verification. The tenant comes from here and nowhere else: never
 * from a path, query or body (docs/architecture.md, "Identity and tenancy"). Every domain call receives it explicitly.
 */
const PRINCIPAL_KINDS = ['api_key', 'user_token', 'api_token', 'device', 'temp_token'] as const;

/**
 * Every actor type an audit entry can carry (lib/audit/audit.ts): a principal's kind,
 * `operator` (an operator acting in another account) and `system` (the lease sweeper).
 */
export const ACTOR_TYPES = [...PRINCIPAL_KINDS, 'operator', 'system'] as const;

export interface Principal {
  /**
   * `temp_token`: a temporary-access token redeemed at GET /api/v1/t/{token} (its id is the grant id; no scopes).
   * `api_token`: a personal API token (lib/auth/api-tokens.ts; its id is the token id).
   */
  readonly kind: (typeof PRINCIPAL_KINDS)[number];
  readonly tenantId: string;
  readonly tenant: Tenant;
  /** The API key id, token id or device id. */
  readonly id: string;
  /** The user (e-mail) the credential acts for: the key's creator, the token's subject. */
  readonly user: string | null;
  readonly scopes: readonly string[];
  /** Platform operator: an admin credential of an operator account. */
  readonly operator: boolean;
  /**
   * For a `user_token` an OAuth client holds (lib/oauth, RFC 9068 `client_id`): the client.
   * It acts for the person with the client's granted scopes only, never as the person's own
   * sign-in (no creator's rights).
   */
  readonly client?: string;
}

/** The request's facts that audit entries and domain calls need beside the principal. */
export interface CallContext {
  readonly principal: Principal;
  readonly requestId: string;
  readonly sourceIp: string | null;
  readonly userAgent: string | null;
}

/**
 * The call context of a system actor acting for no user in `tenant` (the lease sweeper, the
 * payment provider, a workload's token exchange): audit actor type `system`, no scopes. `id`
 * names the actor in audit entries.
 */
export function systemContext(tenant: Tenant, id: string, facts: Omit<CallContext, 'principal'>): CallContext {
  // `system` is an actor type (ACTOR_TYPES), never a credential's kind: no request authenticates as it
  const principal = { kind: 'system' as unknown as Principal['kind'], tenantId: tenant.id, tenant, id, user: null, scopes: [], operator: false } satisfies Principal;
  return { principal, ...facts };
}

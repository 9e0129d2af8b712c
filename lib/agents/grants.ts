import { RESOURCE_TYPES } from '../catalog.js';
import { findHeadById } from '../resources/store.js';
import { type DeviceAuthRecord, type GrantService, readGrantedHead, type StoredGrant } from './store.js';

export { readGrantedHead } from './store.js';

/**
 * What a grant may target. A grant names one exact resource by UUID; its service decides
 * which resource types qualify:
 *
 * - `secret.read`: the generic secret and every stored type without key material
 *   (typed credentials, passwords, API tokens): RESOURCE_TYPES minus containers (no value)
 *   and the `key` types (SSH/GPG/OpenSSL keys, the key kinds, certificates, code-signing
 *   keys, keystores, wallets), whose private material leaves only through their own
 *   export routes and scopes.
 * - `database.issue`: a `service_config` entry of kind `database-role` (issue a lease).
 */
export const GRANT_SERVICES = ['secret.read', 'database.issue'] as const satisfies readonly GrantService[];

const SECRET_READ_TYPES: readonly string[] = RESOURCE_TYPES.filter((t) => !t.key && t.type !== 'container').map((t) => t.type);

const DATABASE_ROLE_TYPE = 'service_config';
export const DATABASE_ROLE_KIND = 'database-role';

/** The head of a resource found by id, as stored. */
interface FoundResource {
  readonly type: string;
  readonly id: string;
  readonly name: string;
  readonly item: Record<string, unknown>;
}

const found = (item: Record<string, unknown>): FoundResource | undefined =>
  typeof item.type === 'string' ? { type: item.type, id: item.id as string, name: String(item.name ?? ''), item } : undefined;

/**
 * A resource of the tenant by id: the `RES#<id>` index entry (keys only), then the head
 * with a consistent read. The index is eventually consistent, so for typed resources a miss
 * falls back to consistent reads of `R#<type>#<id>` for the candidate types.
 */
export async function findResource(tenantId: string, id: string, candidateTypes: readonly string[]): Promise<FoundResource | undefined> {
  const item = await findHeadById(tenantId, id, candidateTypes);
  return item ? found(item) : undefined;
}

export const candidateTypes = (service: GrantService): readonly string[] => (service === 'secret.read' ? SECRET_READ_TYPES : [DATABASE_ROLE_TYPE]);

/** Why a resource does not qualify for a service, or undefined when it does. */
export function mismatch(service: GrantService, res: FoundResource): string | undefined {
  if (service === 'secret.read') {
    return SECRET_READ_TYPES.includes(res.type) ? undefined : `a ${res.type} cannot be the target of secret.read`;
  }
  const meta = (res.item.meta ?? {}) as Record<string, unknown>;
  if (res.type !== DATABASE_ROLE_TYPE || meta.kind !== DATABASE_ROLE_KIND) return 'database.issue needs a service-config entry of kind database-role';
  return undefined;
}

const sameGrant = (a: StoredGrant, b: StoredGrant): boolean =>
  a.alias === b.alias &&
  a.service === b.service &&
  a.resource === b.resource &&
  a.resource_type === b.resource_type &&
  (a.resource_name ?? null) === (b.resource_name ?? null);

/** Whether a device's grant hints are exactly its profile's grants. */
export const hintsCurrent = (hints: readonly StoredGrant[] | undefined, grants: readonly StoredGrant[]): boolean =>
  hints !== undefined && hints.length === grants.length && grants.every((g) => hints.some((h) => sameGrant(h, g)));

/** The head of a granted resource read beside the account and profile, before the grant is known for sure. */
export interface GrantPrefetch {
  readonly grant: StoredGrant;
  readonly head: Promise<Record<string, unknown> | undefined>;
}

/**
 * Starts the read of the head a `secret.read` alias is hinted to (the device's copy of its
 * profile's grants), so that it shares the round trip of the account, profile and nonce
 * reads instead of following the profile. A read only: nothing of it is used unless
 * authentication passes and the profile, read in the same round trip, grants this alias
 * exactly as hinted (prefetchedHead); a stale or missing hint costs one round trip, never
 * a wrong answer.
 */
export function prefetchGrantedHead(device: DeviceAuthRecord, alias: string | undefined): GrantPrefetch | undefined {
  const grant = alias === undefined ? undefined : device.grant_hints?.find((g) => g.alias === alias && g.service === 'secret.read');
  if (!grant) return undefined;
  const head = readGrantedHead(device.tenant_id, grant);
  head.catch(() => undefined); // awaited only when used
  return { grant, head };
}

/** The head for `grant`: the prefetched read when it was of this very grant, else a read now. */
export function grantedHead(tenantId: string, grant: StoredGrant, prefetch: GrantPrefetch | undefined): Promise<Record<string, unknown> | undefined> {
  return prefetch && sameGrant(prefetch.grant, grant) ? prefetch.head : readGrantedHead(tenantId, grant);
}

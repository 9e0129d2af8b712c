import { BatchGetCommand, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { RESOURCE_TYPES } from '../resource-types.js';
import { db, tableName } from '../store/client.js';
import { keys } from '../store/keys.js';
import type { GrantService, StoredGrant } from './store.js';

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

export const SECRET_READ_TYPES: readonly string[] = RESOURCE_TYPES.filter((t) => !t.key && t.type !== 'container').map((t) => t.type);

export const DATABASE_ROLE_TYPE = 'service_config';
export const DATABASE_ROLE_KIND = 'database-role';

/** The head of a resource found by id, as stored. */
export interface FoundResource {
  readonly type: string;
  readonly id: string;
  readonly name: string;
  readonly item: Record<string, unknown>;
}

const typeOfHead = (item: Record<string, unknown>): string | undefined => {
  const sk = item.sk as string;
  if (sk.startsWith(keys.secretPrefix)) return 'secret';
  const m = /^R#([a-z0-9_]+)#/.exec(sk);
  return m?.[1];
};

const found = (item: Record<string, unknown>): FoundResource | undefined => {
  const type = typeOfHead(item);
  return type ? { type, id: item.id as string, name: String(item.name ?? ''), item } : undefined;
};

/**
 * A resource of the tenant by id: the `RES#<id>` index entry (keys only), then the head
 * with a consistent read. The index is eventually consistent, so for typed resources a miss
 * falls back to consistent reads of `R#<type>#<id>` for the candidate types.
 */
export async function findResource(tenantId: string, id: string, candidateTypes: readonly string[]): Promise<FoundResource | undefined> {
  const idx = await db().send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk = :sk',
      ExpressionAttributeValues: { ':pk': keys.resourceIndex(tenantId, id).gsi1pk, ':sk': keys.resourceIndex(tenantId, id).gsi1sk },
    }),
  );
  for (const entry of idx.Items ?? []) {
    if (entry.pk !== keys.tenant(tenantId).pk) continue;
    const head = await db().send(new GetCommand({ TableName: tableName(), Key: { pk: entry.pk, sk: entry.sk }, ConsistentRead: true }));
    if (head.Item && head.Item.id === id) return found(head.Item);
  }
  const typed = candidateTypes.filter((t) => t !== 'secret');
  if (typed.length === 0) return undefined;
  const out = await db().send(
    new BatchGetCommand({
      RequestItems: { [tableName()]: { Keys: typed.map((t) => keys.resource(tenantId, t, id)), ConsistentRead: true } },
    }),
  );
  const item = out.Responses?.[tableName()]?.[0];
  return item ? found(item) : undefined;
}

export const candidateTypes = (service: GrantService): readonly string[] =>
  service === 'secret.read' ? SECRET_READ_TYPES : [DATABASE_ROLE_TYPE];

/** Why a resource does not qualify for a service, or undefined when it does. */
export function mismatch(service: GrantService, res: FoundResource): string | undefined {
  if (service === 'secret.read') {
    return SECRET_READ_TYPES.includes(res.type) ? undefined : `a ${res.type} cannot be the target of secret.read`;
  }
  const meta = (res.item.meta ?? {}) as Record<string, unknown>;
  if (res.type !== DATABASE_ROLE_TYPE || meta.kind !== DATABASE_ROLE_KIND) return 'database.issue needs a service-config entry of kind database-role';
  return undefined;
}

/**
 * The current head of a granted resource, re-checked on every access: it must still exist
 * with the same id and type (a generic secret deleted and re-created under its name has a
 * new id and is no longer the granted resource).
 */
export async function readGrantedHead(tenantId: string, grant: StoredGrant): Promise<Record<string, unknown> | undefined> {
  const key = grant.resource_type === 'secret' ? keys.secret(tenantId, grant.resource_name ?? '') : keys.resource(tenantId, grant.resource_type, grant.resource);
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }));
  return out.Item && out.Item.id === grant.resource ? out.Item : undefined;
}

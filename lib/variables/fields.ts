import { BatchGetCommand, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { openJson } from '../crypto/envelope.js';
import { RESOURCE_TYPES, resourceType } from '../resource-types.js';
import { db, tableName } from '../store/client.js';
import { keys } from '../store/keys.js';
import { sealScope } from '../store/resources.js';

/**
 * A credential by id within an account, and the fields a variable may bind to.
 *
 * Lookup: the head's `RES#<id>` entry in gsi1 (keys only, scoped to the tenant's partition
 * key), then the head with a consistent read; the index is eventually consistent, so a miss
 * falls back to consistent reads of `R#<type>#<id>` for every typed resource type. Another
 * account's id is simply not found.
 *
 * Bindable fields (scalar values only: strings, numbers, booleans):
 * - a generic secret: the keys of its `data`;
 * - a typed resource: its public fields and its secret fields, except description, tags,
 *   fields the credential registry hides or withholds from GET (e.g. a code-signing private
 *   key, exported only behind export:read), and — for key types the registry does not
 *   describe (ssh, gpg, openssl, age, … keys, certificates) — the secret part altogether:
 *   private key material stays behind its own routes.
 */
export interface FoundCredential {
  readonly type: string;
  readonly id: string;
  readonly name: string;
  readonly version: number;
  /** The head's key, for a ConditionCheck that it still exists. */
  readonly key: { readonly pk: string; readonly sk: string };
  readonly meta: Record<string, unknown>;
  readonly sealed: Uint8Array | undefined;
}

function toFound(item: Record<string, unknown>, id: string): FoundCredential | undefined {
  if (item.id !== id) return undefined; // the index may lag a delete-and-recreate
  const sk = String(item.sk);
  const type = sk.startsWith(keys.secretPrefix) ? 'secret' : String(item.type ?? '');
  if (!type) return undefined;
  const meta = type === 'secret' ? {} : ((item.meta ?? {}) as Record<string, unknown>);
  return { type, id, name: String(item.name ?? ''), version: Number(item.version ?? 0), key: { pk: String(item.pk), sk }, meta, sealed: item.value as Uint8Array | undefined };
}

export async function findCredential(tenantId: string, id: string): Promise<FoundCredential | undefined> {
  const index = keys.resourceIndex(tenantId, id);
  const idx = await db().send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk = :sk',
      ExpressionAttributeValues: { ':pk': index.gsi1pk, ':sk': index.gsi1sk },
    }),
  );
  for (const entry of idx.Items ?? []) {
    if (entry.pk !== keys.tenant(tenantId).pk) continue;
    const head = await db().send(new GetCommand({ TableName: tableName(), Key: { pk: entry.pk, sk: entry.sk }, ConsistentRead: true }));
    const found = head.Item ? toFound(head.Item, id) : undefined;
    if (found) return found;
  }
  const typed = RESOURCE_TYPES.filter((t) => t.type !== 'secret').map((t) => keys.resource(tenantId, t.type, id));
  const out = await db().send(new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: typed, ConsistentRead: true } } }));
  const item = out.Responses?.[tableName()]?.[0];
  return item ? toFound(item, id) : undefined;
}

const isScalar = (v: unknown): v is string | number | boolean => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
const COMMON_META = new Set(['description', 'tags', 'secret_fields']);

/** What the credential registry says about a type: hidden and withheld fields (loaded lazily: a heavy module). */
async function registryRules(type: string): Promise<{ known: boolean; excluded: Set<string> }> {
  const { typeByName } = await import('../../functions/credentials/registry.js');
  const def = typeByName(type);
  return { known: def !== undefined, excluded: new Set([...(def?.hidden ?? []), ...(def?.withheld ?? [])]) };
}

/** Every bindable field of a credential with its value as a string. Opens the secret part. */
export async function credentialFields(tenantId: string, c: FoundCredential): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const opened = c.sealed ? await openJson<Record<string, unknown>>(sealScope(tenantId, c.type, c.id, c.version), c.sealed) : undefined;
  if (c.type === 'secret') {
    for (const [k, v] of Object.entries(opened ?? {})) if (isScalar(v)) out.set(k, String(v));
    return out;
  }
  const rules = await registryRules(c.type);
  for (const [k, v] of Object.entries(c.meta)) if (!COMMON_META.has(k) && !rules.excluded.has(k) && isScalar(v)) out.set(k, String(v));
  const secretAllowed = rules.known || resourceType(c.type)?.key !== true;
  if (secretAllowed) for (const [k, v] of Object.entries(opened ?? {})) if (!rules.excluded.has(k) && isScalar(v)) out.set(k, String(v));
  return out;
}

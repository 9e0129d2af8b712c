import { openJson } from '../crypto/envelope.js';
import { RESOURCE_TYPES, resourceType } from '../catalog.js';
import { findHeadById, sealScope } from '../resources/store.js';

/**
 * A credential by id within an account, and the fields a variable may bind to.
 *
 * Lookup: the head's `RES#<id>` entry in gsi1 (keys only, scoped to the tenant's partition
 * key), then the head with a consistent read; the index is eventually consistent, so a miss
 * falls back to consistent reads of `R#<type>#<id>` for every typed resource type. Another
 * account's id is simply not found.
 *
 * Bindable fields (scalar values only: strings, numbers, booleans):
 * - a generic secret: the keys of its `data` (its secret part; its meta is description and tags);
 * - a typed resource: its public fields and its secret fields, except description, tags,
 *   fields the catalogue (lib/catalog.ts) hides or withholds from GET (e.g. a code-signing private
 *   key, exported only behind export:read), and — for key types that are not typed credentials
 *   (ssh, gpg, openssl, age, … keys, certificates) — the secret part altogether:
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
  const type = String(item.type ?? '');
  if (!type) return undefined;
  const meta = (item.meta ?? {}) as Record<string, unknown>;
  return {
    type,
    id,
    name: String(item.name ?? ''),
    version: Number(item.version ?? 0),
    key: { pk: String(item.pk), sk: String(item.sk) },
    meta,
    sealed: item.value as Uint8Array | undefined,
  };
}

export async function findCredential(tenantId: string, id: string): Promise<FoundCredential | undefined> {
  const item = await findHeadById(
    tenantId,
    id,
    RESOURCE_TYPES.map((t) => t.type),
  );
  return item ? toFound(item, id) : undefined;
}

const isScalar = (v: unknown): v is string | number | boolean => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
const COMMON_META = new Set(['description', 'tags', 'secret_fields']);

/**
 * What the catalogue says about a type: whether it is a typed credential (the credentials,
 * passwords and tokens families, whose secret fields are values) and which fields it hides
 * or withholds from GET.
 */
function typeRules(type: string): { typed: boolean; excluded: Set<string> } {
  const e = resourceType(type);
  const typed = e !== undefined && ['credentials', 'passwords', 'tokens'].includes(e.family);
  return { typed, excluded: new Set([...(e?.hidden ?? []), ...(e?.withheld ?? [])]) };
}

/** Every bindable field of a credential with its value as a string. Opens the secret part. */
export async function credentialFields(tenantId: string, c: FoundCredential): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const opened = c.sealed ? await openJson<Record<string, unknown>>(sealScope(tenantId, c.type, c.id, c.version), c.sealed) : undefined;
  const rules = typeRules(c.type);
  for (const [k, v] of Object.entries(c.meta)) if (!COMMON_META.has(k) && !rules.excluded.has(k) && isScalar(v)) out.set(k, String(v));
  const secretAllowed = rules.typed || resourceType(c.type)?.key !== true;
  if (secretAllowed) for (const [k, v] of Object.entries(opened ?? {})) if (!rules.excluded.has(k) && isScalar(v)) out.set(k, String(v));
  return out;
}

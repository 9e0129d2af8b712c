import { createHash } from 'node:crypto';

/**
 * The audit chain's pure parts, shared by the sealer (lib/audit/chain.ts), the export and
 * the verifier (lib/audit/verify.ts, scripts/audit-verify.ts). No configuration, no I/O:
 * a customer can verify an export with this file and Node.js alone.
 *
 * An exported entry is the JSON object of `presentEntry` plus `chain: {seq, prev, hash}`.
 * Its link hash is
 *
 *     hash = hex(SHA-256("secrets-api audit chain v1\n" + seq + "\n" + prev + "\n" + canonical(entry)))
 *
 * where `entry` is the exported object without `chain`, `prev` is the hash of the entry
 * with seq - 1 (64 zeros for seq 1), and canonical() is JSON with object keys sorted by
 * code unit and no whitespace (RFC 8785 for the value types an entry holds: strings,
 * integers, booleans, null, objects and arrays).
 */
const CHAIN_VERSION = 'secrets-api audit chain v1';
export const GENESIS = '0'.repeat(64);

export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new Error('non-finite number in audit entry');
    return JSON.stringify(value) ?? 'null';
  }
  if (value instanceof Uint8Array) throw new Error('binary value in audit entry');
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

export function linkHash(seq: number, prev: string, entry: Record<string, unknown>): string {
  return createHash('sha256')
    .update(`${CHAIN_VERSION}\n${seq}\n${prev}\n${canonicalJson(entry)}`)
    .digest('hex');
}

/** The bytes an account's audit key signs for a chain head or an export digest. */
export const headMessage = (tenantId: string, seq: number, hash: string) => `${CHAIN_VERSION}\nhead\n${tenantId}\n${seq}\n${hash}`;
export const digestMessage = (digest: Record<string, unknown>) => `${CHAIN_VERSION}\ndigest\n${canonicalJson(digest)}`;

export interface ChainLink {
  readonly seq: number;
  readonly prev: string;
  readonly hash: string;
}

/**
 * The public shape of an audit entry (the list, the export and the hashed form):
 * metadata only, never a value, key or token.
 */
export interface AuditEntry {
  readonly id: string;
  readonly time: string;
  readonly tenant_id: string;
  readonly actor: { readonly type: string; readonly id: string; readonly user?: string | null; readonly tenant_id?: string };
  readonly action: string;
  readonly resource: { readonly type: string; readonly id: string; readonly name?: string };
  readonly outcome: string;
  readonly request_id: string | null;
  readonly source_ip: string | null;
  readonly user_agent: string | null;
  readonly detail?: Record<string, unknown>;
}

/** The stored item as its public entry: a deterministic function of the item. */
export function presentEntry(item: Record<string, unknown>): AuditEntry {
  return {
    id: item.id as string,
    time: item.at as string,
    tenant_id: item.tenant_id as string,
    actor: item.actor as AuditEntry['actor'],
    action: item.action as string,
    resource: item.resource as AuditEntry['resource'],
    outcome: (item.outcome as string | undefined) ?? 'success',
    request_id: (item.request_id as string | undefined) ?? null,
    source_ip: (item.source_ip as string | undefined) ?? null,
    user_agent: (item.user_agent as string | undefined) ?? null,
    ...(item.detail !== undefined ? { detail: item.detail as Record<string, unknown> } : {}),
  };
}

import { createHmac, timingSafeEqual } from 'node:crypto';
import { config } from '../config.js';
import { keyProvider } from '../crypto/envelope.js';
import { KeyCache } from '../crypto/key-cache.js';
import { currentScope, TenantScopeViolation } from '../tenancy/scope.js';

/**
 * The audit queue's per-tenant MAC key (lib/audit/queue.ts, message v2; issue 31).
 *
 * The audit queue is written by every read-only route, so the queue itself proves nothing
 * about the tenant a message names. A sender authenticates each entry with HMAC-SHA256 under
 * an audit data key of the entry's tenant: a KMS data key generated with the encryption
 * context `{tenant_id: <tid>, purpose: "audit-queue"}`. A tenant route generates it through
 * its tenant-access session, whose role may call GenerateDataKey only with
 * `tenant_id = ${aws:PrincipalTag/tenant_id}` and that purpose (infra/grants.ts,
 * `TenantAuditKey`); the message carries the wrapped key and the MAC. The writer unwraps the
 * key with the context of the tenant the entry CLAIMS, through that tenant's session: a key
 * generated for tenant A does not open under B's context (KMS binds the context to the
 * ciphertext), so no function can vouch for an entry of a tenant other than its session's.
 *
 * Cost: the sender keeps its key per tenant per container for DATA_KEY_CACHE_SECONDS
 * (default 300 s), the writer keeps each unwrapped key per (tenant, ciphertext) as long: one
 * GenerateDataKey per tenant per sending container and one Decrypt per such key per writer
 * container every 5 minutes, whatever the message rate; one HMAC per message (microseconds).
 */
export const AUDIT_KEY_PURPOSE = 'audit-queue';

/** The encryption context of a tenant's audit data key. */
const auditKeyContext = (tenantId: string): Record<string, string> => ({ tenant_id: tenantId, purpose: AUDIT_KEY_PURPOSE });

/** Keys kept per container (the oldest goes first). */
const MAX_KEYS = 1000;

interface Held {
  readonly key: Buffer;
  readonly wrapped: string;
}

/** Per container for DATA_KEY_CACHE_SECONDS (lib/crypto/key-cache.ts). */
const keyCache = () => new KeyCache<Held>({ max: MAX_KEYS, ttlMs: () => config().DATA_KEY_CACHE_SECONDS * 1000 });
const senderKeys = keyCache();
const writerKeys = keyCache();
let calls = { generated: 0, opened: 0 };

/**
 * The sender's audit key of `tenantId`, from this container's cache while it lasts. Inside a
 * tenant scope only the scope's own tenant: a request cannot mint a key for another account
 * (and its tenant-access role could not either).
 */
export async function senderAuditKey(tenantId: string): Promise<{ key: Buffer; wrapped: string }> {
  const scoped = currentScope()?.tenantId;
  if (scoped !== undefined && scoped !== tenantId)
    throw new TenantScopeViolation(`a request of tenant ${scoped} cannot send an audit entry of another tenant`);
  return senderKeys.get(tenantId, async () => {
    calls.generated++;
    const dk = await keyProvider().generateDataKey(auditKeyContext(tenantId));
    return { key: Buffer.from(dk.plaintext), wrapped: Buffer.from(dk.wrapped).toString('base64') };
  });
}

/**
 * The writer's key of a message claiming `tenantId`: the wrapped key opened with that tenant's
 * context (the caller runs in that tenant's scope, so through its session). Cached per
 * (tenant, ciphertext): a ciphertext opened for A is never reused for a message claiming B.
 */
export async function writerAuditKey(tenantId: string, wrapped: string): Promise<Buffer> {
  const held = await writerKeys.get(`${tenantId}\u0000${wrapped}`, async () => {
    calls.opened++;
    const key = await keyProvider().decryptDataKey(Buffer.from(wrapped, 'base64'), auditKeyContext(tenantId));
    return { key: Buffer.from(key), wrapped };
  });
  return held.key;
}

const MAC_LABEL = 'secrets-api audit-queue v2\n';

/** HMAC-SHA256 of an entry's JSON (the exact string the message carries), base64url. */
export function auditMac(key: Buffer, entryJson: string): string {
  return createHmac('sha256', key).update(MAC_LABEL).update(entryJson).digest('base64url');
}

/** Whether `mac` is the entry's MAC under `key` (constant time). */
export function auditMacValid(key: Buffer, entryJson: string, mac: string): boolean {
  const want = Buffer.from(auditMac(key, entryJson), 'base64url');
  const got = Buffer.from(mac, 'base64url');
  return got.length === want.length && timingSafeEqual(got, want);
}

/** KMS calls made for audit keys in this container (GenerateDataKey by the sender, Decrypt by the writer): tests and bench. */
export const auditKeyCalls = (): { generated: number; opened: number } => ({ ...calls });

/** Forgets every cached audit key (tests). */
export function resetAuditKeys(): void {
  senderKeys.clear();
  writerKeys.clear();
  calls = { generated: 0, opened: 0 };
}

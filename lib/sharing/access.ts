import type { CallContext } from '../auth/principal.js';
import { requireScopes } from '../auth/scopes.js';
import { HttpError, notFound } from '../core/errors.js';
import { RESOURCE_TYPES, resourceType } from '../catalog.js';
import { ROUTES } from '../routes.js';
import type { ResourceRecord } from '../resources/store.js';
import { readAccount } from '../store/tenants.js';
import { ownerScope } from '../tenancy/scope.js';
import { readHead, typeOrNotFound, type Head } from './heads.js';
import { shareFor, type Permission, type Share } from './store/shares.js';

/**
 * Who may read a resource, in one place: the owner's account with the type's read scope, or
 * the user (e-mail) an active share names, from any account. A share is the permission: it
 * does not need the type's read scope in the recipient's account (a route may still require
 * one at the router, as GET /api/v1/secrets/{name} does). The tenant a share reads from comes
 * from the share item, never from the request, and the owner's account must be active.
 */
interface Readable {
  readonly tenantId: string;
  readonly record: ResourceRecord;
  readonly sealed: Uint8Array | undefined;
  readonly via: 'owner' | 'share';
  /** The share that grants access (via = 'share'). */
  readonly share?: Share;
  /** The head item as stored (its `value` sealed). */
  readonly item: Record<string, unknown>;
}

/** The caller's identity for shares: the user (e-mail) its credential acts for, lower-cased. */
export const recipientOf = (ctx: CallContext): string | null => ctx.principal.user?.toLowerCase() ?? null;

/** The share of a resource with the caller's user, if any, whose owner account is active. */
export async function activeShareFor(ctx: CallContext, type: string, id: string, need: Permission = 'read'): Promise<Share | undefined> {
  const email = recipientOf(ctx);
  if (!email) return undefined;
  const share = await shareFor(email, type, id);
  if (!share || (need === 'write' && share.permission !== 'write')) return undefined;
  // the projected account read authentication makes (the execution role's AccountRead): still the caller's scope
  const owner = await readAccount(share.owner_tenant_id);
  if (!owner || owner.status !== 'active') return undefined;
  return share;
}

/** Whether a resource is shared with the caller's user (the credentials capability's sharedRead hook). */
export async function isSharedWith(ctx: CallContext, type: string, id: string): Promise<boolean> {
  return (await activeShareFor(ctx, type, id)) !== undefined;
}

/**
 * A resource of another account shared with the caller with at least `need` ('write'
 * implies 'read'), or undefined; the resource must still exist.
 */
export async function sharedHead(ctx: CallContext, type: string, id: string, need: Permission = 'read'): Promise<{ tenantId: string; head: Head; share: Share } | undefined> {
  typeOrNotFound(type);
  const share = await activeShareFor(ctx, type, id, need);
  if (!share) return undefined;
  // the share passed: the owner's item is read with the owner's credentials (lib/tenancy/scope.ts)
  const head = await ownerScope(share.owner_tenant_id, () => readHead(share.owner_tenant_id, type, id));
  if (!head) return undefined;
  return { tenantId: share.owner_tenant_id, head, share };
}

/**
 * The one read-access check for a resource by type and id: the caller's own resource (with
 * the type's read scope, else 403), else one shared with the caller's user; anything else —
 * missing, another account's, a revoked share — is the same 404.
 */
export async function resolveReadable(ctx: CallContext, type: string, id: string): Promise<Readable> {
  const rt = typeOrNotFound(type);
  const own = await readHead(ctx.principal.tenantId, type, id);
  if (own) {
    requireScopes(ctx.principal, rt.scopes.read);
    return { tenantId: ctx.principal.tenantId, record: own.record, sealed: own.sealed, via: 'owner', item: own.item };
  }
  const shared = await sharedHead(ctx, type, id, 'read');
  if (!shared) throw notFound(type.replace(/_/g, ' '));
  return { tenantId: shared.tenantId, record: shared.head.record, sealed: shared.head.sealed, via: 'share', share: shared.share, item: shared.head.item };
}

/**
 * For GET handlers that read a resource with their own code (`read(tenantId)`, throwing a
 * 404 when it is not there): the caller's account first; when the resource is not there
 * and is shared with the caller's user, the owner's account. Any other 404 stays a 404.
 */
export async function ownOrShared<T>(ctx: CallContext, type: string, id: string, read: (tenantId: string) => Promise<T>): Promise<T> {
  try {
    return await read(ctx.principal.tenantId);
  } catch (error) {
    if (!(error instanceof HttpError) || error.status !== 404) throw error;
    const share = await activeShareFor(ctx, type, id);
    if (!share || share.owner_tenant_id === ctx.principal.tenantId) throw error;
    // the share passed: the owner-side read (and decryption) with the owner's credentials
    return ownerScope(share.owner_tenant_id, () => read(share.owner_tenant_id));
  }
}

/**
 * GET handlers that honour read shares (through resolveReadable / ownOrShared / the secrets
 * service): a type is shareable when its item route is served by one of them — the secrets
 * GET and the item GET of every typed collection (lib/credentials/handlers.ts), whose module
 * is named after its collection under its family's folder.
 */
export const SHARE_AWARE_GET_HANDLERS: ReadonlySet<string> = new Set([
  'secrets/secrets.get',
  ...RESOURCE_TYPES.filter((t) => t.family === 'credentials' || t.family === 'passwords').map((t) => `${t.family}/${t.collection}.get`),
]);

/** Where a recipient reads a shared resource of this type, or undefined when no route honours shares. */
export function shareReadPath(type: string, id: string): string | undefined {
  const rt = resourceType(type);
  if (!rt) return undefined;
  const route = ROUTES.find((r) => r.method === 'GET' && (r.path === `${rt.path}/{id}` || r.path === `${rt.path}/{name}`));
  if (!route?.handler || !SHARE_AWARE_GET_HANDLERS.has(route.handler)) return undefined;
  return `${rt.path}/${id}`;
}

import type { CallContext } from '../auth/principal.js';
import { hasScope } from '../auth/scopes.js';
import { forbidden } from '../http/errors.js';
import { isSharedWith } from '../sharing/access.js';
import type { TypedRecord } from './service.js';
import type { CredentialType } from './model.js';

/**
 * Read access to a resource's secret part on routes whose scopes are checked in the handler
 * (lib/routes.ts "handler", e.g. GET /api/v1/passwords/{id}): the caller holds the type's
 * read scope, or created the resource (the same user), or it was shared with them.
 */
export async function assertCanRead(ctx: CallContext, def: CredentialType, record: TypedRecord): Promise<void> {
  const p = ctx.principal;
  if (def.scopes.read.every((s) => hasScope(p.scopes, s))) return;
  if (p.user !== null && record.created_by === p.user) return;
  if (await sharedRead(ctx, def.type, record.id)) return;
  throw forbidden(
    `missing scope: ${def.scopes.read.join(', ')} (or ownership or a share of this ${def.type.replace(/_/g, ' ')})`,
    'insufficient_scope',
  );
}

/** Whether the resource was shared with the caller's user for reading (lib/sharing). */
export const sharedRead = (ctx: CallContext, type: string, id: string): Promise<boolean> => isSharedWith(ctx, type, id);

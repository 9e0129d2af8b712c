import type { CallContext } from '../auth/principal.js';
import { hasScope } from '../auth/scopes.js';
import { forbidden } from '../core/errors.js';
import { isSharedWith } from '../sharing/access.js';
import type { TypedRecord } from './service.js';
import type { CredentialType } from './model.js';

/**
 * Read access to a resource's secret part on routes whose scopes are checked in the handler
 * (lib/routes.ts "handler", e.g. GET /api/v1/passwords/{id}): the caller holds the type's
 * read scope, or is the resource's creator in their own sign-in session, or it was shared with
 * them. An API key or personal API token acts for the user who issued it but holds only its
 * own scopes: it never inherits its issuer's ownership (a key scoped `audit:read` issued by the
 * creator does not read the creator's passwords).
 */
export async function assertCanRead(ctx: CallContext, def: CredentialType, record: TypedRecord): Promise<void> {
  const p = ctx.principal;
  if (def.scopes.read.every((s) => hasScope(p.scopes, s))) return;
  if (isCreatorSession(ctx, record)) return;
  if (await sharedRead(ctx, def.type, record.id)) return;
  throw forbidden(
    `missing scope: ${def.scopes.read.join(', ')} (or ownership or a share of this ${def.type.replace(/_/g, ' ')})`,
    'insufficient_scope',
  );
}

/** Whether the resource was shared with the caller's user for reading (lib/sharing). */
export const sharedRead = (ctx: CallContext, type: string, id: string): Promise<boolean> => isSharedWith(ctx, type, id);

/**
 * The caller is the resource's creator, acting in their own sign-in session: not a credential
 * they issued, nor an OAuth client's token acting for them (it holds the client's scopes only).
 */
const isCreatorSession = (ctx: CallContext, record: Pick<TypedRecord, 'created_by'>): boolean =>
  ctx.principal.kind === 'user_token' &&
  ctx.principal.client === undefined &&
  ctx.principal.user !== null &&
  record.created_by === ctx.principal.user;

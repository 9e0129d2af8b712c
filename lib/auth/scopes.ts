import { forbidden } from '../core/errors.js';
import type { Principal } from './principal.js';

export const ADMIN_SCOPE = 'admin:*';

/** `admin:*` implies every scope of its tenant; other scopes are exact strings. */
export const hasScope = (scopes: readonly string[], scope: string): boolean =>
  scopes.includes(ADMIN_SCOPE) || scopes.includes(scope);

export const missingScopes = (scopes: readonly string[], required: readonly string[]): string[] =>
  required.filter((s) => !hasScope(scopes, s));

/** Throws 403 unless the principal holds every required scope. */
export function requireScopes(principal: Principal, required: readonly string[]): void {
  const missing = missingScopes(principal.scopes, required);
  if (missing.length > 0) throw forbidden(`missing scope: ${missing.join(', ')}`, 'insufficient_scope');
}

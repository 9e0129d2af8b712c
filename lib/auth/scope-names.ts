import { closest, distance } from 'fastest-levenshtein';
import * as z from 'zod/v4';
import { KNOWN_SCOPES } from '../routes.js';

/**
 * A scope name in a request (API keys, API tokens): one of the service's scopes
 * (lib/routes.ts KNOWN_SCOPES). An unknown one is refused with the nearest valid name when
 * it is a likely typo (edit distance ≤ 3), else with the list of valid names.
 */
function unknownScopeMessage(scope: string): string {
  const nearest = closest(scope, [...KNOWN_SCOPES]);
  if (nearest && distance(scope, nearest) <= 3) return `unknown scope "${scope}": did you mean "${nearest}"?`;
  return `unknown scope "${scope}": valid scopes are ${KNOWN_SCOPES.join(', ')}`;
}

export const ScopeName = z
  .string()
  .superRefine((s, ctx) => {
    if (!KNOWN_SCOPES.includes(s)) ctx.addIssue({ code: 'custom', message: unknownScopeMessage(s.slice(0, 64)) });
  })
  // the description carries the same rule as the enum of the names
  .meta({ enum: [...KNOWN_SCOPES] });

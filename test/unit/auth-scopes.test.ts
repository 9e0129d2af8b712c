import { describe, expect, it } from 'vitest';
import { ADMIN_SCOPE, hasScope, missingScopes, requireScopes } from '../../lib/auth/scopes.js';
import { HttpError } from '../../lib/core/errors.js';
import type { Principal } from '../../lib/auth/principal.js';

/** lib/auth/scopes.ts: admin:* implies every scope; every other scope is an exact string. */
const principal = (scopes: string[]) => ({ scopes }) as unknown as Principal;

describe('scopes', () => {
  it('admin:* is the admin scope and implies any scope, even unknown ones', () => {
    expect(ADMIN_SCOPE).toBe('admin:*');
    expect(hasScope(['admin:*'], 'secrets:read')).toBe(true);
    expect(hasScope(['secrets:read', 'admin:*'], 'anything:at-all')).toBe(true);
  });

  it('other scopes match exactly: no prefix, wildcard, case folding or substring', () => {
    expect(hasScope(['secrets:read'], 'secrets:read')).toBe(true);
    expect(hasScope(['secrets:read'], 'secrets:write')).toBe(false);
    expect(hasScope(['secrets:*'], 'secrets:read')).toBe(false);
    expect(hasScope(['secrets'], 'secrets:read')).toBe(false);
    expect(hasScope(['SECRETS:READ'], 'secrets:read')).toBe(false);
    expect(hasScope(['secrets:read:extra'], 'secrets:read')).toBe(false);
    expect(hasScope(['admin'], 'secrets:read')).toBe(false);
    expect(hasScope(['admin:read'], 'secrets:read')).toBe(false);
    expect(hasScope([], 'secrets:read')).toBe(false);
  });

  it('missingScopes lists exactly the required scopes not held, in order', () => {
    expect(missingScopes(['a'], ['a', 'b', 'c'])).toEqual(['b', 'c']);
    expect(missingScopes(['c', 'a'], ['a', 'b', 'c'])).toEqual(['b']);
    expect(missingScopes(['admin:*'], ['a', 'b'])).toEqual([]);
    expect(missingScopes([], [])).toEqual([]);
  });

  it('requireScopes: nothing when all are held; else 403 insufficient_scope naming every missing one', () => {
    expect(requireScopes(principal(['a', 'b']), ['a', 'b'])).toBeUndefined();
    expect(requireScopes(principal(['x']), [])).toBeUndefined();
    let error: unknown;
    try {
      requireScopes(principal(['a']), ['a', 'b', 'c']);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(HttpError);
    expect(error).toMatchObject({ status: 403, code: 'insufficient_scope', message: 'missing scope: b, c' });
  });
});

import { ADMIN_SCOPE } from '../auth/scopes.js';
import type { ROLES, User } from './store.js';

export { getUser, listUsers, ROLES, type User } from './store.js';

/**
 * The people of an account (docs/api.md, "Sign-in"): the admin named when the account was
 * created (lib/operator/accounts.ts writes that item) and the users who sign in through the
 * account's identity provider. A user's scopes are its own list (an SSO user's, mapped from
 * its claims at each sign-in) or, without one, its role's. Item `T#<tid>` / `USER#<email>`.
 */
type Role = (typeof ROLES)[number];

const ROLE_SCOPES: Readonly<Record<Role, readonly string[]>> = {
  admin: [ADMIN_SCOPE],
  member: [
    'secrets:read',
    'secrets:write',
    'history:read',
    'credentials:read',
    'credentials:write',
    'passwords:read',
    'passwords:write',
    'variables:read',
    'variables:write',
  ],
  viewer: ['secrets:read', 'credentials:read', 'passwords:read', 'variables:read'],
};

/** The scopes a user's session carries. */
export const scopesOf = (user: Pick<User, 'role' | 'scopes'>): readonly string[] => user.scopes ?? ROLE_SCOPES[user.role];

/** What a list shows of a user: never the verifier. */
export function userView(u: User) {
  return {
    email: u.email,
    role: u.role,
    scopes: scopesOf(u),
    source: u.source,
    password: u.srp_verifier !== undefined,
    created_at: u.created_at,
    last_sign_in_at: u.last_sign_in_at,
  };
}

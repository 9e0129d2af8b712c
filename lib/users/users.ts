import { GetCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/v4';
import { ADMIN_SCOPE } from '../auth/scopes.js';
import { db, tableName } from '../store/client.js';
import { entity, nullable } from '../store/entity.js';
import { keys } from '../store/keys.js';
import { queryAll } from '../store/pagination.js';

/**
 * The people of an account (docs/api.md, "Sign-in"): the admin named when the account was
 * created (lib/operator/accounts.ts writes that item) and the users who sign in through the
 * account's identity provider. A user's scopes are its own list (an SSO user's, mapped from
 * its claims at each sign-in) or, without one, its role's. Item `T#<tid>` / `USER#<email>`.
 */
export const ROLES = ['admin', 'member', 'viewer'] as const;
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

const UserItem = z.object({
  email: z.string(),
  role: z.enum(ROLES),
  scopes: nullable(z.array(z.string())),
  /** `admin` (named at creation) or `sso`. */
  source: z.enum(['admin', 'sso']).default('admin'),
  /** An SSO user's identity: the provider's issuer and the `sub` it named; only that identity signs in as this user (lib/sso/oidc.ts). */
  issuer: z.string().optional(),
  subject: z.string().optional(),
  created_at: z.string(),
  last_sign_in_at: nullable(z.string()),
  /** SRP-6a: the salt (public) and the verifier sealed with the account's data key; absent: no password. */
  srp_salt: z.string().optional(),
  srp_verifier: z.instanceof(Uint8Array).optional(),
  /** The SRP version the verifier was registered for (lib/users/srp.ts); absent: 1. */
  srp_version: z.union([z.literal(1), z.literal(2)]).optional(),
  srp_updated_at: z.string().optional(),
});
export type User = z.output<typeof UserItem>;
const users = entity('user', UserItem);

/** The scopes a user's session carries. */
export const scopesOf = (user: Pick<User, 'role' | 'scopes'>): readonly string[] => user.scopes ?? ROLE_SCOPES[user.role];

export async function getUser(tenantId: string, email: string): Promise<User | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.user(tenantId, email), ConsistentRead: true }));
  return out.Item ? users.parse(out.Item) : undefined;
}

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

/** Every user of an account (an account has few: one query). */
export async function listUsers(tenantId: string): Promise<User[]> {
  const items = await queryAll({ pk: keys.tenant(tenantId).pk, sk: { prefix: keys.userPrefix } });
  return items.map((i) => users.parse(i));
}

import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/v4';
import { db, tableName } from '../store/client.js';
import { entity, nullable } from '../store/entity.js';
import { keys } from '../store/keys.js';
import { queryAll } from '../store/pagination.js';

/**
 * The users feature's store module (the one place its DynamoDB commands are built): the
 * people of an account (`T#<tid>` / `USER#<email>`), their sessions and refresh tokens,
 * passkeys and their challenges, CLI logins, and the single-use items of sign-in. Keys come
 * from lib/store/keys.ts; callers never write a query, a condition or a cast.
 */
export const ROLES = ['admin', 'member', 'viewer'] as const;

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

export async function getUser(tenantId: string, email: string): Promise<User | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.user(tenantId, email), ConsistentRead: true }));
  return out.Item ? users.parse(out.Item) : undefined;
}

/**
 * Writes an SSO user (lib/sso/oidc.ts): a new one, or, given the identity it was read with
 * (`existing`), a replacement of that SSO user only, never of a user written meanwhile (a
 * local one, another identity's). False when the condition refused it.
 */
export async function putSsoUser(
  tenantId: string,
  email: string,
  user: User,
  existing: { issuer: string; subject: string } | undefined,
): Promise<boolean> {
  try {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        // no EMAIL listing key (platpk): the user is written in its account's tenant session, which may
        // name no platform listing's key (infra/grants/tenant-table.ts); nothing reads that listing
        Item: { ...keys.user(tenantId, email), ...user },
        // only the user read above is replaced: a user written meanwhile (a local one, another identity's) never is
        ConditionExpression: existing ? '#src = :sso AND subject = :sub AND issuer = :iss' : 'attribute_not_exists(pk)',
        ...(existing
          ? {
              ExpressionAttributeNames: { '#src': 'source' },
              ExpressionAttributeValues: { ':sso': 'sso', ':sub': existing.subject, ':iss': existing.issuer },
            }
          : {}),
      }),
    );
    return true;
  } catch (error) {
    if ((error as { name?: string }).name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

/** Binds a local user to an SSO identity (issuer, subject) unless it is bound to another one; false when refused. */
export async function bindUserIdentity(tenantId: string, email: string, issuer: string, subject: string): Promise<boolean> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.user(tenantId, email),
        UpdateExpression: 'SET issuer = :iss, subject = :sub',
        ConditionExpression: 'attribute_exists(pk) AND #src <> :sso AND (attribute_not_exists(issuer) OR (issuer = :iss AND subject = :sub))',
        ExpressionAttributeNames: { '#src': 'source' },
        ExpressionAttributeValues: { ':iss': issuer, ':sub': subject, ':sso': 'sso' },
      }),
    );
    return true;
  } catch (error) {
    if ((error as { name?: string }).name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

/** Every user of an account (an account has few: one query). */
export async function listUsers(tenantId: string): Promise<User[]> {
  const items = await queryAll({ pk: keys.tenant(tenantId).pk, sk: { prefix: keys.userPrefix } });
  return items.map((i) => users.parse(i));
}

/**
 * Spends a single-use item (a sign-in challenge, an OIDC state): one conditional
 * DeleteItem returning the item, so of two requests presenting it only one gets it.
 * Undefined when it does not exist (unknown, already spent, or removed by TTL).
 */
/**
 * A single-use item read without spending it (consistent): what names the account a sign-in's
 * second step acts for, read on the route's own role before the spend, which runs in that
 * account's session (lib/routes.ts OWN_PARTITIONS). A lookup item naming an account it was not
 * written in is dropped (lib/tenancy/lookups.ts).
 */
export async function peek(key: { pk: string; sk: string }): Promise<Record<string, unknown> | undefined> {
  return (await db().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }))).Item;
}

export async function spend(key: { pk: string; sk: string }): Promise<Record<string, unknown> | undefined> {
  try {
    const out = await db().send(
      new DeleteCommand({ TableName: tableName(), Key: key, ReturnValues: 'ALL_OLD', ConditionExpression: 'attribute_exists(pk)' }),
    );
    return out.Attributes;
  } catch (error) {
    if ((error as { name?: string }).name === 'ConditionalCheckFailedException') return undefined;
    throw error;
  }
}

// --- sessions and refresh tokens (lib/users/sessions.ts)

export interface SessionItem {
  readonly id: string;
  readonly user: string;
  readonly status: string;
  readonly created_at?: string;
  readonly expires_at: string;
  /** An OAuth client's session (lib/oauth): the client and the scopes it was granted. */
  readonly client_id?: string;
  readonly scopes?: string[];
  /** Its tokens' issuer when the authorization server opened it (RFC 9068). */
  readonly issuer?: string;
}

export async function readSession(tenantId: string, sessionId: string): Promise<SessionItem | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.session(tenantId, sessionId), ConsistentRead: true }));
  return out.Item as SessionItem | undefined;
}

/** The refresh-token item of a token's SHA-256 (a global lookup), as stored. */
export async function readRefreshToken(hash: string): Promise<Record<string, any> | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.refreshToken(hash), ConsistentRead: true }));
  return out.Item;
}

// --- passwords (lib/users/passwords.ts)

/** A password-reset token's item (by the token's SHA-256), as stored. */
export async function readPasswordReset(hash: string): Promise<Record<string, unknown> | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.passwordReset(hash), ConsistentRead: true }));
  return out.Item;
}

/** Writes a new SRP sign-in challenge `id` with its fields. */
export async function putSrpChallenge(id: string, fields: Record<string, unknown>): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...keys.srpChallenge(id),
        ...fields,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
}

// --- passkeys (lib/users/passkeys.ts)

const PasskeyItem = z.object({
  id: z.string(),
  user: z.string(),
  name: z.string(),
  public_key: z.instanceof(Uint8Array),
  counter: z.number().int().min(0),
  transports: z.array(z.string()),
  device_type: z.string(),
  backed_up: z.boolean(),
  created_at: z.string(),
  last_used_at: nullable(z.string()),
});
export type Passkey = z.output<typeof PasskeyItem>;
const passkeys = entity('passkey', PasskeyItem);

export const listPasskeys = async (tenantId: string): Promise<Passkey[]> =>
  (await queryAll({ pk: keys.tenant(tenantId).pk, sk: { prefix: keys.passkeyPrefix } })).map((i) => passkeys.parse(i));

export async function getPasskey(tenantId: string, id: string): Promise<Passkey | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.passkey(tenantId, id), ConsistentRead: true }));
  return out.Item ? passkeys.parse(out.Item) : undefined;
}

/** Writes a new WebAuthn challenge item (`item` plus its expiry) under a fresh `id`. */
export async function putChallenge(id: string, item: Record<string, unknown>, seconds: number): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...keys.webauthnChallenge(id),
        ...item,
        expires_at: new Date(Date.now() + seconds * 1000).toISOString(),
        ttl: Math.floor(Date.now() / 1000) + seconds,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
}

// --- CLI logins (lib/users/cli-login.ts)

const CliLoginSchema = z.object({
  id: z.string(),
  code_hash: z.string(),
  user_code_hash: z.string(),
  client_id: nullable(z.string()),
  name: nullable(z.string()),
  status: z.enum(['pending', 'approved', 'denied', 'issued']),
  created_at: z.string(),
  expires_at: z.number(),
  interval: z.number(),
  last_poll_at: z.number().default(0),
  tenant_id: nullable(z.string()),
  user: nullable(z.string()),
  decided_at: nullable(z.string()),
});
export type CliLogin = z.output<typeof CliLoginSchema>;
const CliLoginItem = entity('CLI login', CliLoginSchema);

export async function getLogin(codeHash: string): Promise<CliLogin | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.cliLogin(codeHash), ConsistentRead: true }));
  return out.Item ? CliLoginItem.parse(out.Item) : undefined;
}

/** The user-code pointer of a CLI login (the user code's SHA-256 to the login's code hash), as stored. */
export async function readCliUserCode(userCodeHash: string): Promise<Record<string, any> | undefined> {
  const pointer = await db().send(new GetCommand({ TableName: tableName(), Key: keys.cliUserCode(userCodeHash), ConsistentRead: true }));
  return pointer.Item;
}

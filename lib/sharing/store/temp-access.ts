import { entity, nullable } from '../../store/entity.js';
import * as z from 'zod/v4';
import { createHash, randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../../store/client.js';
import { keys } from '../../store/keys.js';
import type { TxItem } from '../../store/tx.js';
import { queryAll } from '../../store/pagination.js';

/**
 * Temporary access grants: a random token (`sct_` + 256 bits, base64url) that reads one
 * resource without any other credential until it expires, is revoked, or — for a single-use
 * grant — has been redeemed once. The token is shown once, inside the redemption URL; the
 * table holds only its SHA-256. Three items, written together:
 *
 * - `T#<tid>` / `TEMPACCESS#<type>#<resource id>#<grant id>`: the grant, listed per resource;
 * - `T#<tid>` / `TEMPID#<grant id>`: finds it by id (revocation);
 * - `TEMPTOKEN#<sha256(token)>` / `TOKEN`: the redemption lookup (a request carries only the
 *   token), holding the tenant id.
 *
 * Expiry is checked on every read (and in the redemption's condition); the items carry a TTL
 * of expiry plus RETENTION_SECONDS, so an expired, revoked or used token answers 410 for a
 * week and then, once DynamoDB has removed it, 404 like a token never issued.
 */
const RETENTION_SECONDS = 7 * 24 * 3600;

export interface Grant {
  readonly id: string;
  readonly tenant_id: string;
  readonly type: string;
  readonly resource_id: string;
  readonly resource_name: string;
  readonly single_use: boolean;
  readonly expires_at: string;
  /** expires_at in epoch milliseconds (compared in conditions). */
  readonly expires_ms: number;
  readonly uses: number;
  readonly created_at: string;
  readonly created_by: string | null;
  readonly revoked_at?: string;
  readonly revoked_by?: string;
  readonly first_used_at?: string;
  readonly last_used_at?: string;
  readonly token_hash: string;
}

export type GrantStatus = 'active' | 'expired' | 'revoked' | 'used';

export function grantStatus(g: Grant, now = Date.now()): GrantStatus {
  if (g.revoked_at) return 'revoked';
  if (g.single_use && g.uses >= 1) return 'used';
  if (now >= g.expires_ms) return 'expired';
  return 'active';
}

const TOKEN_PREFIX = 'sct_';

export function newTempToken(): { token: string; hash: string } {
  const token = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { token, hash: hashTempToken(token) };
}

const hashTempToken = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

const GrantItem = entity(
  'temporary access grant',
  z.object({
    id: z.string(),
    tenant_id: z.string(),
    type: z.string(),
    resource_id: z.string(),
    resource_name: z.string(),
    single_use: z.boolean(),
    expires_at: z.string(),
    expires_ms: z.number(),
    uses: z.number().default(0),
    created_at: z.string(),
    created_by: nullable(z.string()),
    revoked_at: z.string().optional(),
    revoked_by: z.string().optional(),
    first_used_at: z.string().optional(),
    last_used_at: z.string().optional(),
    token_hash: z.string(),
  }),
);
const toGrant = (item: Record<string, unknown>): Grant => GrantItem.parse(item);

const ttlOf = (g: Grant) => Math.floor(g.expires_ms / 1000) + RETENTION_SECONDS;

export function grantItems(g: Grant): TxItem[] {
  const ttl = ttlOf(g);
  return [
    {
      Put: {
        TableName: tableName(),
        Item: { ...keys.tempGrant(g.tenant_id, g.type, g.resource_id, g.id), ...g, ttl },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    {
      Put: {
        TableName: tableName(),
        Item: { ...keys.tempGrantRef(g.tenant_id, g.id), id: g.id, type: g.type, resource_id: g.resource_id, ttl },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    { Put: { TableName: tableName(), Item: { ...keys.tempToken(g.token_hash), ...g, ttl }, ConditionExpression: 'attribute_not_exists(pk)' } },
  ];
}

/** Marks a grant revoked (the grant and its token item; index 0 must exist). */
export function revokeItems(g: Grant, at: string, by: string): TxItem[] {
  const set = (key: Record<string, string>): TxItem => ({
    Update: {
      TableName: tableName(),
      Key: key,
      UpdateExpression: 'SET revoked_at = :at, revoked_by = :by',
      ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(revoked_at)',
      ExpressionAttributeValues: { ':at': at, ':by': by },
    },
  });
  return [set(keys.tempGrant(g.tenant_id, g.type, g.resource_id, g.id)), set(keys.tempToken(g.token_hash))];
}

/**
 * One redemption: the token item counts the use only while the grant is active (not
 * revoked, not expired, and unused if single-use) — index 0 fails otherwise — and the
 * grant item records it.
 */
export function redeemItems(g: Grant, now: number): TxItem[] {
  const at = new Date(now).toISOString();
  const condition = g.single_use
    ? 'attribute_exists(pk) AND attribute_not_exists(revoked_at) AND expires_ms > :now AND uses = :zero'
    : 'attribute_exists(pk) AND attribute_not_exists(revoked_at) AND expires_ms > :now';
  return [
    {
      Update: {
        TableName: tableName(),
        Key: keys.tempToken(g.token_hash),
        UpdateExpression: 'ADD uses :one SET last_used_at = :at, first_used_at = if_not_exists(first_used_at, :at)',
        ConditionExpression: condition,
        ExpressionAttributeValues: { ':one': 1, ':at': at, ':now': now, ...(g.single_use ? { ':zero': 0 } : {}) },
      },
    },
    {
      Update: {
        TableName: tableName(),
        Key: keys.tempGrant(g.tenant_id, g.type, g.resource_id, g.id),
        UpdateExpression: 'ADD uses :one SET last_used_at = :at, first_used_at = if_not_exists(first_used_at, :at)',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':one': 1, ':at': at },
      },
    },
  ];
}

export async function grantByToken(token: string): Promise<Grant | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.tempToken(hashTempToken(token)), ConsistentRead: true }));
  return out.Item ? toGrant(out.Item) : undefined;
}

export async function grantById(tenantId: string, grantId: string): Promise<Grant | undefined> {
  const ref = await db().send(new GetCommand({ TableName: tableName(), Key: keys.tempGrantRef(tenantId, grantId), ConsistentRead: true }));
  if (!ref.Item) return undefined;
  const out = await db().send(
    new GetCommand({
      TableName: tableName(),
      Key: keys.tempGrant(tenantId, ref.Item.type as string, ref.Item.resource_id as string, grantId),
      ConsistentRead: true,
    }),
  );
  return out.Item ? toGrant(out.Item) : undefined;
}

const MAX_LISTED_GRANTS = 1000;

/** The grants of one resource, newest first (still within their retention). */
export async function grantsOf(tenantId: string, type: string, resourceId: string): Promise<Grant[]> {
  const items = await queryAll({ pk: keys.tenant(tenantId).pk, sk: { prefix: keys.tempGrantPrefix(type, resourceId) } }, MAX_LISTED_GRANTS);
  return items.map(toGrant).sort((a, b) => (a.id < b.id ? 1 : -1));
}

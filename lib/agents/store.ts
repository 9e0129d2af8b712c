import * as z from 'zod/v4';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { recordPollAt, statusUpdate, userCodePointerDelete, userCodePointerPut } from '../auth/device-flow.js';
import { db, serviceDb, tableName } from '../store/client.js';
import { entity, nullable } from '../store/entity.js';
import { keys } from '../store/keys.js';
import { queryPage } from '../store/pagination.js';
import type { TxItem } from '../store/tx.js';
import type { DeviceAlgorithm, PublicJwk } from '../crypto/device-public-key.js';

/**
 * Storage of the agents capability (key design: lib/store/keys.ts).
 *
 * - A device has a tenant-first item (`T#<tid>` / `AGENTDEVICE#<id>`: listing, history) and,
 *   while active, a global auth item (`DEVICE#<id>`) holding everything a signed request
 *   needs: a request carries only its key id. Both are written in one transaction;
 *   revocation deletes the auth item in the transaction that marks the device revoked, so
 *   the very next request finds no key (every read is consistent, nothing is cached). It
 *   also carries `grant_hints`, a copy of the profile's grants that only lets the granted
 *   head be read beside the profile; the profile, read on every request, decides.
 * - Profiles are tenant-first (`AGENTPROFILE#<id>`), read consistently on every request.
 * - Nonces of signed requests are global items with a TTL, claimed by a conditional put.
 * - RFC 8628 authorizations are global (the device has no account yet), keyed by the hash of
 *   the device code; the user code and the enrolment token point to them by hash.
 */

export type GrantService = 'secret.read' | 'database.issue';

/** A grant as stored: the client's triple plus what the resource was resolved to. */
export interface StoredGrant {
  readonly alias: string;
  readonly service: GrantService;
  readonly resource: string;
  /** The resource's internal type (lib/catalog.ts), resolved when the grant was written. */
  readonly resource_type: string;
  /** For a generic secret: its name (the head's key), checked against the id on every access. */
  readonly resource_name?: string;
}

export interface ProfileRecord {
  readonly id: string;
  readonly name: string;
  readonly enabled: boolean;
  readonly grants: readonly StoredGrant[];
  readonly version: number;
  readonly created_at: string | null;
  readonly updated_at: string | null;
  readonly created_by: string | null;
  readonly updated_by: string | null;
}

export type EnrolledVia = 'device_authorization' | 'account_credentials';

export interface DeviceRecord {
  readonly id: string;
  readonly name: string;
  readonly profile_id: string;
  readonly algorithm: DeviceAlgorithm;
  readonly public_key: PublicJwk;
  /** RFC 7638 thumbprint of the public key. */
  readonly fingerprint: string;
  readonly status: 'active' | 'revoked';
  readonly enrolled_via: EnrolledVia;
  readonly created_at: string;
  readonly created_by: string | null;
  readonly revoked_at: string | null;
  readonly revoked_by: string | null;
}

/** The global auth item of an active device. */
export interface DeviceAuthRecord {
  readonly device_id: string;
  readonly tenant_id: string;
  readonly name: string;
  readonly profile_id: string;
  readonly algorithm: DeviceAlgorithm;
  readonly public_key: PublicJwk;
  /**
   * A copy of the profile's grants as last seen by an access of this device: only a hint
   * (lib/agents/grants.ts prefetchGrantedHead), checked against the profile read on every
   * request and rewritten by the access that finds it stale. Absent on items written
   * before it existed (and until the device's first access): those read the granted
   * resource after the profile, one round trip later.
   */
  readonly grant_hints?: readonly StoredGrant[] | undefined;
}

/** The item kinds of the agents capability, each zod-checked on read (lib/store/entity.ts). */
const Jwk = z.union([
  z.object({ kty: z.literal('OKP'), crv: z.literal('Ed25519'), x: z.string() }),
  z.object({ kty: z.literal('EC'), crv: z.literal('P-256'), x: z.string(), y: z.string() }),
]);
const Algorithm = z.enum(['ed25519', 'ecdsa-p256-sha256']);
const Grant = z.object({
  alias: z.string(),
  service: z.enum(['secret.read', 'database.issue']),
  resource: z.string(),
  resource_type: z.string(),
  resource_name: z.string().optional(),
});
const DeviceItem = entity(
  'agent device',
  z.object({
    id: z.string(),
    name: z.string(),
    profile_id: z.string(),
    algorithm: Algorithm,
    public_key: Jwk,
    fingerprint: z.string(),
    status: z.enum(['active', 'revoked']),
    enrolled_via: z.enum(['device_authorization', 'account_credentials']),
    created_at: z.string(),
    created_by: nullable(z.string()),
    revoked_at: nullable(z.string()),
    revoked_by: nullable(z.string()),
  }),
);
const DeviceAuthItem = entity(
  'device auth',
  z.object({
    device_id: z.string(),
    tenant_id: z.string(),
    name: z.string(),
    profile_id: z.string(),
    algorithm: Algorithm,
    public_key: Jwk,
    grant_hints: z.array(Grant).optional(),
  }),
);
const ProfileItem = entity(
  'agent profile',
  z.object({
    id: z.string(),
    name: z.string(),
    enabled: z.boolean(),
    grants: z.array(Grant),
    version: z.number().int(),
    // timestamps read as null when absent (items written by hand, as in tests)
    created_at: nullable(z.string()),
    updated_at: nullable(z.string()),
    created_by: nullable(z.string()),
    updated_by: nullable(z.string()),
  }),
);

async function get(key: Record<string, string>): Promise<Record<string, unknown> | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }));
  return out.Item;
}

// ---------------------------------------------------------------- devices

export async function getDeviceAuth(deviceId: string): Promise<DeviceAuthRecord | undefined> {
  const item = await get(keys.deviceAuth(deviceId));
  return item ? DeviceAuthItem.parse(item) : undefined;
}

export async function getDevice(tenantId: string, id: string): Promise<DeviceRecord | undefined> {
  const item = await get(keys.agentDevice(tenantId, id));
  return item ? DeviceItem.parse(item) : undefined;
}

export async function listDevices(tenantId: string, page: { limit: number; offset?: number; cursor?: string }) {
  const out = await queryPage<Record<string, unknown>>({
    pk: keys.tenant(tenantId).pk,
    prefix: keys.agentDevicePrefix,
    limit: page.limit,
    offset: page.offset,
    cursor: page.cursor,
    projection: DeviceItem.fields,
  });
  return { devices: out.items.map((i) => DeviceItem.parse(i)), nextCursor: out.nextCursor };
}

/** The two items of a new device (tenant item and global auth item), both new. */
export function devicePuts(tenantId: string, rec: DeviceRecord): TxItem[] {
  const auth: DeviceAuthRecord = {
    device_id: rec.id,
    tenant_id: tenantId,
    name: rec.name,
    profile_id: rec.profile_id,
    algorithm: rec.algorithm,
    public_key: rec.public_key,
  };
  return [
    { Put: { TableName: tableName(), Item: { ...keys.agentDevice(tenantId, rec.id), ...rec }, ConditionExpression: 'attribute_not_exists(pk)' } },
    { Put: { TableName: tableName(), Item: { ...keys.deviceAuth(rec.id), ...auth }, ConditionExpression: 'attribute_not_exists(pk)' } },
  ];
}

/** Revocation: the tenant item marked revoked (only if active) and the auth item deleted. */
export function deviceRevokeItems(tenantId: string, id: string, at: string, by: string | null): TxItem[] {
  return [
    {
      Update: {
        TableName: tableName(),
        Key: keys.agentDevice(tenantId, id),
        UpdateExpression: 'SET #s = :revoked, revoked_at = :at, revoked_by = :by',
        ConditionExpression: '#s = :active',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':revoked': 'revoked', ':active': 'active', ':at': at, ':by': by },
      },
    },
    {
      Delete: {
        TableName: tableName(),
        Key: keys.deviceAuth(id),
        ConditionExpression: 'tenant_id = :tid',
        ExpressionAttributeValues: { ':tid': tenantId },
      },
    },
  ];
}

/**
 * Rewrites a device's grant hints to its profile's grants, in the transaction of the access
 * that found them stale; only while the auth item exists in this account (a device revoked
 * meanwhile fails the transaction instead of leaving a stub auth item).
 */
export const grantHintsUpdate = (tenantId: string, deviceId: string, grants: readonly StoredGrant[]): TxItem => ({
  Update: {
    TableName: tableName(),
    Key: keys.deviceAuth(deviceId),
    UpdateExpression: 'SET grant_hints = :g',
    ConditionExpression: 'tenant_id = :tid',
    ExpressionAttributeValues: {
      ':g': grants.map((g) => ({
        alias: g.alias,
        service: g.service,
        resource: g.resource,
        resource_type: g.resource_type,
        ...(g.resource_name === undefined ? {} : { resource_name: g.resource_name }),
      })),
      ':tid': tenantId,
    },
  },
});

// ---------------------------------------------------------------- nonces

/**
 * Claims a request nonce for a device: a conditional put that fails when the nonce was
 * already used inside its retention (an expired item not yet removed by TTL may be reused).
 * Returns false on reuse.
 */
export async function claimNonce(deviceId: string, nonce: string, keepUntilEpochSeconds: number, nowEpochSeconds: number): Promise<boolean> {
  try {
    // the function's own credentials: nonces are not tenant items (execution role, `DeviceNonce`)
    await serviceDb().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.deviceNonce(deviceId, nonce), ttl: keepUntilEpochSeconds },
        ConditionExpression: 'attribute_not_exists(pk) OR #ttl < :now',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':now': nowEpochSeconds },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

// ---------------------------------------------------------------- profiles

export async function getProfile(tenantId: string, id: string): Promise<ProfileRecord | undefined> {
  const item = await get(keys.agentProfile(tenantId, id));
  return item ? ProfileItem.parse(item) : undefined;
}

export async function listProfiles(tenantId: string, page: { limit: number; offset?: number; cursor?: string }) {
  const out = await queryPage<Record<string, unknown>>({
    pk: keys.tenant(tenantId).pk,
    prefix: keys.agentProfilePrefix,
    limit: page.limit,
    offset: page.offset,
    cursor: page.cursor,
    projection: ProfileItem.fields,
  });
  return { profiles: out.items.map((i) => ProfileItem.parse(i)), nextCursor: out.nextCursor };
}

/** Put of a profile: new (no item) or replacing exactly the version that was read. */
export function profilePut(tenantId: string, rec: ProfileRecord, previousVersion: number | null): TxItem {
  return {
    Put: {
      TableName: tableName(),
      Item: { ...keys.agentProfile(tenantId, rec.id), ...rec },
      ...(previousVersion === null
        ? { ConditionExpression: 'attribute_not_exists(pk)' }
        : { ConditionExpression: 'version = :v', ExpressionAttributeValues: { ':v': previousVersion } }),
    },
  };
}

/** A transaction check that the profile exists (a device is bound to it). */
export const profileExists = (tenantId: string, id: string): TxItem => ({
  ConditionCheck: { TableName: tableName(), Key: keys.agentProfile(tenantId, id), ConditionExpression: 'attribute_exists(pk)' },
});

// ---------------------------------------------------------------- RFC 8628 authorizations

type AuthorizationStatus = 'pending' | 'approved' | 'denied' | 'issued' | 'enrolled';

export interface AuthorizationRecord {
  /** The authorization's id (audit entries name it). */
  readonly id: string;
  /** sha256 of the device code (the item's key); the code itself is never stored. */
  readonly code_hash: string;
  readonly user_code_hash: string;
  readonly name: string;
  readonly public_key: PublicJwk;
  readonly algorithm: DeviceAlgorithm;
  readonly fingerprint: string;
  readonly requested_profile_id: string | null;
  /** The OAuth `client_id` the device sent (RFC 8628 §3.1), null when it sent none; polls must name the same client. */
  readonly client_id: string | null;
  readonly status: AuthorizationStatus;
  readonly created_at: string;
  /** Epoch seconds: the device code, the user code and an issued enrolment token end here. */
  readonly expires_at: number;
  /** Seconds the device must wait between polls (raised by 5 on every slow_down). */
  readonly interval: number;
  /** Epoch milliseconds of the last poll, 0 before the first. */
  readonly last_poll_at: number;
  readonly tenant_id: string | null;
  readonly profile_id: string | null;
  readonly decided_by: string | null;
  readonly decided_at: string | null;
  readonly token_hash: string | null;
  readonly device_id: string | null;
}

const AuthorizationItem = entity(
  'device authorization',
  z.object({
    id: z.string(),
    code_hash: z.string(),
    user_code_hash: z.string(),
    name: z.string(),
    public_key: Jwk,
    algorithm: Algorithm,
    fingerprint: z.string(),
    requested_profile_id: nullable(z.string()),
    client_id: nullable(z.string()),
    status: z.enum(['pending', 'approved', 'denied', 'issued', 'enrolled']),
    created_at: z.string(),
    expires_at: z.number(),
    interval: z.number(),
    last_poll_at: z.number().default(0),
    tenant_id: nullable(z.string()),
    profile_id: nullable(z.string()),
    decided_by: nullable(z.string()),
    decided_at: nullable(z.string()),
    token_hash: nullable(z.string()),
    device_id: nullable(z.string()),
  }),
);

export async function getAuthorization(codeHash: string): Promise<AuthorizationRecord | undefined> {
  const item = await get(keys.deviceAuthorization(codeHash));
  return item ? AuthorizationItem.parse(item) : undefined;
}

/** The authorization a user code points to (the pointer and the record both unexpired). */
export async function getAuthorizationByUserCode(userCodeHash: string, nowSeconds: number): Promise<AuthorizationRecord | undefined> {
  const pointer = await get(keys.userCode(userCodeHash));
  if (!pointer || Number(pointer.ttl) <= nowSeconds) return undefined;
  const rec = await getAuthorization(pointer.code_hash as string);
  return rec && rec.user_code_hash === userCodeHash ? rec : undefined;
}

/** The authorization an enrolment token points to. */
export async function getAuthorizationByToken(tokenHash: string): Promise<AuthorizationRecord | undefined> {
  const pointer = await get(keys.enrolmentToken(tokenHash));
  if (!pointer) return undefined;
  const rec = await getAuthorization(pointer.code_hash as string);
  return rec && rec.token_hash === tokenHash ? rec : undefined;
}

export function authorizationPuts(rec: AuthorizationRecord, ttl: number): TxItem[] {
  return [
    {
      Put: {
        TableName: tableName(),
        // the null fields left out (they read as null): a pending authorization names no
        // account, and the device endpoint's role may not name `tenant_id` (lib/routes.ts OWN_PARTITIONS)
        Item: { ...keys.deviceAuthorization(rec.code_hash), ...Object.fromEntries(Object.entries(rec).filter(([, v]) => v !== null)), ttl },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    userCodePointerPut(keys.userCode(rec.user_code_hash), rec.code_hash, rec.expires_at),
  ];
}

/** A conditional status change of an authorization, with extra SET clauses. */
export const authorizationUpdate = (codeHash: string, from: AuthorizationStatus, set: Record<string, unknown>): TxItem =>
  statusUpdate(keys.deviceAuthorization(codeHash), from, set);

export const userCodeDelete = (userCodeHash: string, codeHash: string): TxItem => userCodePointerDelete(keys.userCode(userCodeHash), codeHash);

export const enrolmentTokenPut = (tokenHash: string, codeHash: string, ttl: number): TxItem => ({
  Put: {
    TableName: tableName(),
    Item: { ...keys.enrolmentToken(tokenHash), code_hash: codeHash, ttl },
    ConditionExpression: 'attribute_not_exists(pk)',
  },
});

export const enrolmentTokenDelete = (tokenHash: string): TxItem => ({
  Delete: { TableName: tableName(), Key: keys.enrolmentToken(tokenHash), ConditionExpression: 'attribute_exists(pk)' },
});

/** Records a poll of a pending authorization (lib/auth/device-flow.ts). */
export const recordPoll = (codeHash: string, previous: number, at: number, interval: number): Promise<boolean> =>
  recordPollAt(keys.deviceAuthorization(codeHash), previous, at, interval);

/**
 * The current head of a granted resource, re-checked on every access: it must still exist
 * with the same id and type (a generic secret deleted and re-created under its name has a
 * new id and is no longer the granted resource).
 */
export async function readGrantedHead(tenantId: string, grant: StoredGrant): Promise<Record<string, unknown> | undefined> {
  const key =
    grant.resource_type === 'secret'
      ? keys.secret(tenantId, grant.resource_name ?? '')
      : keys.resource(tenantId, grant.resource_type, grant.resource);
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }));
  return out.Item && out.Item.id === grant.resource ? out.Item : undefined;
}

import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { nowIso } from '../ids.js';
import { db, tableName } from '../store/client.js';
import { keys } from '../store/keys.js';

/**
 * The events feature's store module (the one place its DynamoDB commands are built): the
 * outbox items the relay reads and removes (lib/events/relay.ts; lib/outbox/outbox.ts writes
 * them), the webhooks `WEBHOOK#<id>` and their deliveries `WHDLV#<webhook>#<event>`
 * (lib/events/webhooks.ts declares their shapes), and the LEASES and AUDIT listing keys the relay
 * sets on a lease or an audit entry (lib/events/platform-listings.ts). Keys come from lib/store/keys.ts.
 */
export async function readOutboxItem(key: { pk: string; sk: string }): Promise<Record<string, unknown> | undefined> {
  return (await db().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }))).Item;
}

export async function deleteOutboxItem(key: { pk: string; sk: string }): Promise<void> {
  await db().send(new DeleteCommand({ TableName: tableName(), Key: key }));
}

// --- webhooks and their deliveries (lib/events/webhooks.ts)

const DELIVERY_TTL_DAYS = 30;

export type DeliveryStatus = 'queued' | 'retrying' | 'succeeded' | 'dead';

export interface Attempt {
  readonly attempt: number;
  readonly at: string;
  readonly status_code: number | null;
  readonly latency_ms: number;
  readonly error: string | null;
}

export async function readWebhookItem(tenantId: string, id: string): Promise<Record<string, unknown> | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.webhook(tenantId, id), ConsistentRead: true }));
  return out.Item;
}

const ttl = () => Math.floor(Date.now() / 1000) + DELIVERY_TTL_DAYS * 86400;

/** The delivery record of a relayed event (idempotent: a re-relay keeps the record). */
export async function deliveryQueued(tenantId: string, webhookId: string, event: { id: string; type: string }): Promise<void> {
  const at = nowIso();
  try {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: {
          ...keys.delivery(tenantId, webhookId, event.id),
          webhook_id: webhookId,
          event_id: event.id,
          event_type: event.type,
          status: 'queued',
          attempts: [],
          attempt_count: 0,
          next_retry_at: null,
          dead_lettered_at: null,
          created_at: at,
          updated_at: at,
          ttl: ttl(),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}

/**
 * Claims a delivery for one attempt: refused when it already succeeded or is dead
 * ('done'), or while another worker holds it ('busy'). The claim lapses at `untilMs`.
 */
export async function claimDelivery(
  tenantId: string,
  webhookId: string,
  event: { id: string; type: string },
  untilMs: number,
): Promise<{ state: 'claimed'; attemptCount: number } | { state: 'done' | 'busy' }> {
  const now = Date.now();
  try {
    const out = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.delivery(tenantId, webhookId, event.id),
        UpdateExpression:
          'SET claimed_until = :until, webhook_id = :wh, event_id = :ev, event_type = :type, #s = if_not_exists(#s, :queued), attempts = if_not_exists(attempts, :empty), attempt_count = if_not_exists(attempt_count, :zero), created_at = if_not_exists(created_at, :at), #ttl = if_not_exists(#ttl, :ttl)',
        ConditionExpression:
          '(attribute_not_exists(#s) OR NOT #s IN (:succeeded, :dead)) AND (attribute_not_exists(claimed_until) OR claimed_until < :now)',
        ExpressionAttributeNames: { '#s': 'status', '#ttl': 'ttl' },
        ExpressionAttributeValues: {
          ':until': untilMs,
          ':now': now,
          ':wh': webhookId,
          ':ev': event.id,
          ':type': event.type,
          ':queued': 'queued',
          ':empty': [],
          ':zero': 0,
          ':at': nowIso(),
          ':ttl': ttl(),
          ':succeeded': 'succeeded',
          ':dead': 'dead',
        },
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { state: 'claimed', attemptCount: Number(out.Attributes?.attempt_count ?? 0) };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const status = (error.Item?.status as { S?: string } | undefined)?.S;
    return { state: status === 'succeeded' || status === 'dead' ? 'done' : 'busy' };
  }
}

/** Records an attempt and the delivery's new status, releasing the claim. */
export async function recordAttempt(
  tenantId: string,
  webhookId: string,
  eventId: string,
  attempt: Attempt,
  status: DeliveryStatus,
  nextRetryAt: string | null,
): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.delivery(tenantId, webhookId, eventId),
      UpdateExpression:
        'SET attempts = list_append(if_not_exists(attempts, :empty), :a), #s = :status, next_retry_at = :next, updated_at = :at, dead_lettered_at = :dead REMOVE claimed_until ADD attempt_count :one',
      ExpressionAttributeNames: { '#s': 'status' },
      ExpressionAttributeValues: {
        ':empty': [],
        ':a': [attempt],
        ':status': status,
        ':next': nextRetryAt,
        ':at': attempt.at,
        ':one': 1,
        ':dead': status === 'dead' ? attempt.at : null,
      },
    }),
  );
}

/** A delivery parked without a new attempt (e.g. its webhook was disabled or removed). */
export async function markDead(tenantId: string, webhookId: string, eventId: string, reason: string): Promise<void> {
  const at = nowIso();
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.delivery(tenantId, webhookId, eventId),
      UpdateExpression: 'SET #s = :dead, dead_lettered_at = :at, updated_at = :at, next_retry_at = :null, reason = :reason REMOVE claimed_until',
      ExpressionAttributeNames: { '#s': 'status' },
      ExpressionAttributeValues: { ':dead': 'dead', ':at': at, ':null': null, ':reason': reason },
    }),
  );
}

/** A lease's status, expiry and listing keys (lib/events/platform-listings.ts), read consistently. */
export async function readLeaseListing(key: { pk: string; sk: string }): Promise<Record<string, unknown> | undefined> {
  const out = await db().send(
    new GetCommand({
      TableName: tableName(),
      Key: key,
      ConsistentRead: true,
      ProjectionExpression: '#s, expires_at, platpk, platsk',
      ExpressionAttributeNames: { '#s': 'status' },
    }),
  );
  return out.Item;
}

/**
 * Marks a lease as seen by the sweeper (`listing_checked_at`), conditional on the status read,
 * and nothing else: a change of the lease whose stream record makes the relay set its LEASES
 * entry from the lease (lib/events/platform-listings.ts). What a worker in the lease's tenant
 * session does where it may not write the listing's attributes. False when the lease changed
 * meanwhile (that change's own record lists it) or is gone.
 */
export async function touchLease(key: { pk: string; sk: string }, status: string, at: string): Promise<boolean> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: key,
        UpdateExpression: 'SET listing_checked_at = :at',
        ConditionExpression: '#s = :s',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':at': at, ':s': status },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

/**
 * Sets (`want`) or removes an item's platform listing keys (`platpk`, `platsk`) and nothing
 * else, conditional only on the item existing (an update never creates one): the stream relay's
 * one write on its own role, which IAM confines to these attribute names on account partitions
 * (infra/grants/table.ts `platformListingWrite`). No other attribute is named, not even in the
 * condition: a condition's attributes are the request's `dynamodb:Attributes` too, and a role
 * allowed to name `status` could set any item's status. False when the item is gone.
 */
export async function writeListing(key: { pk: string; sk: string }, want: { platpk: string; platsk: string } | undefined): Promise<boolean> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: key,
        ...(want
          ? { UpdateExpression: 'SET platpk = :lpk, platsk = :lsk', ExpressionAttributeValues: { ':lpk': want.platpk, ':lsk': want.platsk } }
          : { UpdateExpression: 'REMOVE platpk, platsk' }),
        ConditionExpression: 'attribute_exists(pk)',
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

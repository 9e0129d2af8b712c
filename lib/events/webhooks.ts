import * as z from 'zod/v4';
import { randomBytes } from 'node:crypto';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { open, seal } from '../crypto/envelope.js';
import { nowIso } from '../ids.js';
import { db, tableName } from '../store/client.js';
import { entity, nullable } from '../store/entity.js';
import { keys, tenantPk } from '../store/keys.js';
import { queryAll } from '../store/pagination.js';

/**
 * Webhook subscriptions and their delivery records (one table, tenant partition):
 * - `WEBHOOK#<id>`: url, event patterns, description, enabled, and the Standard Webhooks
 *   signing secret sealed with the account's data key (shown once, at creation);
 * - `WHDLV#<webhook id>#<event id>`: one delivery of one event to one webhook: status
 *   (queued → retrying → succeeded | dead), every attempt (time, status code, latency,
 *   error), the next retry; kept DELIVERY_TTL_DAYS.
 */
const DELIVERY_TTL_DAYS = 30;

export interface Webhook {
  readonly id: string;
  readonly url: string;
  readonly events: string[];
  readonly description: string;
  readonly enabled: boolean;
  readonly created_at: string;
  readonly created_by: string | null;
  readonly updated_at: string;
}

type DeliveryStatus = 'queued' | 'retrying' | 'succeeded' | 'dead';

export interface Attempt {
  readonly attempt: number;
  readonly at: string;
  readonly status_code: number | null;
  readonly latency_ms: number;
  readonly error: string | null;
}

export interface Delivery {
  readonly id: string;
  readonly webhook_id: string;
  readonly event_id: string;
  readonly event_type: string;
  readonly status: DeliveryStatus;
  readonly attempts: Attempt[];
  readonly attempt_count: number;
  readonly next_retry_at: string | null;
  readonly dead_lettered_at: string | null;
  readonly created_at: string;
  readonly updated_at: string;
}

const WebhookItem = entity(
  'webhook',
  z.object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    description: z.string().default(''),
    enabled: z.boolean(),
    created_at: z.string(),
    created_by: nullable(z.string()),
    updated_at: z.string(),
  }),
);
export const toWebhook = (item: Record<string, unknown>): Webhook => WebhookItem.parse(item);

const DeliveryItem = entity(
  'webhook delivery',
  z.object({
    webhook_id: z.string(),
    event_id: z.string(),
    event_type: z.string(),
    status: z.enum(['queued', 'retrying', 'succeeded', 'dead']),
    attempts: z
      .array(
        z.looseObject({
          attempt: z.number(),
          at: z.string(),
          status_code: z.number().nullable(),
          latency_ms: z.number(),
          error: z.string().nullable(),
        }),
      )
      .default([]),
    attempt_count: z.number().default(0),
    next_retry_at: nullable(z.string()),
    dead_lettered_at: nullable(z.string()),
    created_at: z.string(),
    updated_at: z.string(),
  }),
);
export const toDelivery = (item: Record<string, unknown>): Delivery => ({ id: item.event_id as string, ...DeliveryItem.parse(item) });

const secretScope = (tenantId: string, id: string) => ({ tenantId, type: 'webhook', id, version: 1 });

/** A new Standard Webhooks secret: `whsec_` + base64 of 32 random bytes. */
export const newSigningSecret = () => `whsec_${randomBytes(32).toString('base64')}`;
export const sealSigningSecret = (tenantId: string, id: string, secret: string) => seal(secretScope(tenantId, id), secret);

export async function getWebhook(tenantId: string, id: string): Promise<{ webhook: Webhook; sealedSecret: Uint8Array } | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.webhook(tenantId, id), ConsistentRead: true }));
  return out.Item ? { webhook: toWebhook(out.Item), sealedSecret: out.Item.secret as Uint8Array } : undefined;
}

export async function openSigningSecret(tenantId: string, id: string, sealed: Uint8Array): Promise<string> {
  return (await open(secretScope(tenantId, id), sealed)).toString('utf8');
}

export async function listWebhooks(tenantId: string): Promise<Webhook[]> {
  return (await queryAll({ pk: tenantPk(tenantId), sk: { prefix: keys.webhookPrefix } })).map(toWebhook);
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

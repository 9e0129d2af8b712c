import { sealTenant } from '../audit/chain.js';
import { logger } from '../core/logger.js';
import { keys } from '../store/keys.js';
import type { DeliveryMessage, WebhookEvent } from './delivery.js';
import { subscribed } from './payloads.js';
import { listAuditEntry, listLease, listTokenKey } from './platform-listings.js';
import { queue } from './queue.js';
import { withTenant } from '../tenancy/scope.js';
import { deleteOutboxItem, readOutboxItem } from './store.js';
import { deliveryQueued, listWebhooks, type Webhook } from './webhooks.js';

/**
 * The outbox relay (docs/architecture.md, "Events"). A change writes its event into the table
 * in the same transaction (lib/outbox/outbox.ts); the table's stream (NEW_IMAGE) carries the
 * insert to the relay function, filtered to outbox and audit inserts (OUTBOX_STREAM). Nothing
 * polls the table: an event leaves when its stream record arrives.
 *
 * For each outbox record, in stream order: for each enabled webhook of the account subscribed
 * to its type (for `webhook.test`: only the webhook under test) a queued delivery is recorded
 * and one queue message sent; then the outbox item is deleted. The item is the mark: a record
 * whose item is gone was relayed already (a retried batch skips it), so a message is sent
 * once unless the relay dies between send and delete (at-least-once; the worker drops a
 * delivery already done).
 *
 * No overlapping relays: the mapping runs one invocation per stream shard at a time
 * (ParallelizationFactor 1), and a shard holds every record of a partition key in order.
 *
 * Partial failures: at the first record that fails the relay stops and reports that record's
 * sequence number (ReportBatchItemFailures). The mapping checkpoints before it and retries
 * from it; the records before it are not sent again, the ones after were not sent yet.
 *
 * The LEASES platform listing rides it too: each lease insert or change is listed (or
 * unlisted) for the sweeper from the lease's own keys and status (lib/events/platform-listings.ts).
 *
 * Whose credentials (issue 31; docs/architecture.md, "Roles that are not tenant-scoped"): every
 * record names its account (`T#<tid>`), and everything the relay does in that account runs in
 * the account's tenant session (lib/tenancy/scope.ts `withTenant`; infra/background.ts
 * `tenantAccess: 'grants'`): the webhooks and the outbox item read, the delivery recorded, the
 * outbox item deleted, the chain sealed with the account's audit key, the lease read. Its own
 * role sends the queue messages and writes the platform listings' two keys and nothing else
 * (lib/events/platform-listings.ts), which no tenant session may name.
 *
 * Audit sealing rides the same stream: the accounts with audit inserts in the batch are
 * sealed (lib/audit/chain.ts, sealTenant: conditional on the chain head, so sealers on other
 * shards cannot fork a chain), each back to its oldest inserted entry at least (an entry the
 * audit writer inserts late, lib/audit/queue.ts, can be older than the sealer's lookback), and
 * then each inserted entry is listed in the AUDIT listing. A seal or listing that fails is
 * reported as its account's first audit record, so the stream retries it; an entry is never
 * left for a schedule to find.
 */
export const OUTBOX_STREAM = {
  /** Lambda event filter patterns: outbox and audit inserts only (TTL deletes and every other item stay out). */
  filters: [
    { eventName: ['INSERT'], dynamodb: { Keys: { sk: { S: [{ prefix: keys.outboxPrefix }] } } } },
    { eventName: ['INSERT'], dynamodb: { Keys: { sk: { S: [{ prefix: keys.auditPrefix }] } } } },
    // lease inserts and changes: the LEASES platform listing (lib/events/platform-listings.ts)
    { eventName: ['INSERT', 'MODIFY'], dynamodb: { Keys: { sk: { S: [{ prefix: keys.leasePrefix }] } } } },
    // token-signing key inserts: the TOKENKEYS platform listing (lib/events/platform-listings.ts listTokenKey)
    { eventName: ['INSERT'], dynamodb: { Keys: { sk: { S: [{ prefix: keys.tokenKeyPrefix }] } } } },
  ],
  batchSize: 100,
  maxBatchingWindowSeconds: 1,
  /** Stop a poisoned record after this many retries (it lands in the log and the failure alarm). */
  retryAttempts: 10,
  /** One concurrent invocation per shard: the relay never overlaps itself on a key. */
  parallelizationFactor: 1,
} as const;

/** The part of a DynamoDB stream record the relay reads (aws-lambda's DynamoDBRecord). */
export interface StreamRecord {
  readonly eventName?: string;
  readonly dynamodb?: {
    readonly Keys?: Record<string, { S?: string }>;
    /** The item as written (the table's stream is NEW_IMAGE): a token key's insert says whether it came listed. */
    readonly NewImage?: Record<string, unknown>;
    readonly SequenceNumber?: string;
  };
}

interface RelayOutcome {
  readonly batchItemFailures: { itemIdentifier: string }[];
  readonly events: number;
  readonly messages: number;
  readonly sealed: number;
}

function targetsOf(hooks: readonly Webhook[], event: Pick<WebhookEvent, 'type' | 'data'>): Webhook[] {
  if (event.type === 'webhook.test') return hooks.filter((h) => h.id === event.data.webhook_id);
  return hooks.filter((h) => h.enabled && subscribed(h.events, event.type));
}

const keyOf = (r: StreamRecord) => ({ pk: r.dynamodb?.Keys?.pk?.S ?? '', sk: r.dynamodb?.Keys?.sk?.S ?? '' });

/** Relays one outbox event (in its account's tenant session, but the queue's send); returns the messages sent. */
async function relayEvent(key: { pk: string; sk: string }, hooksOf: (tid: string) => Promise<Webhook[]>): Promise<number> {
  const tid = key.pk.slice(2);
  const hooks = await hooksOf(tid);
  let messages = 0;
  if (hooks.length > 0) {
    const item = await readOutboxItem(key);
    if (!item) return 0; // relayed by an earlier attempt of this batch
    const event: WebhookEvent = {
      id: item.id as string,
      type: item.type as string,
      timestamp: item.occurred_at as string,
      tenant_id: tid,
      data: (item.data ?? {}) as Record<string, unknown>,
    };
    const q = await queue();
    for (const hook of targetsOf(hooks, event)) {
      await deliveryQueued(tid, hook.id, event);
      const message: DeliveryMessage = { v: 1, tenant_id: tid, webhook_id: hook.id, event };
      await q.send(JSON.stringify(message));
      messages++;
    }
  }
  await deleteOutboxItem(key);
  return messages;
}

/** Seals the account's new entries in its tenant session, then lists each inserted one (`entries`) on the relay's own role. */
async function sealAndList(tid: string, entries: readonly { pk: string; sk: string }[], since: string | undefined): Promise<number> {
  const sealed = await withTenant(tid, () => sealTenant(tid, since));
  for (const entry of entries) await listAuditEntry(entry);
  return sealed;
}

/** Handles one batch of stream records (already filtered by OUTBOX_STREAM, or not: others are skipped). */
export async function relayRecords(records: readonly StreamRecord[]): Promise<RelayOutcome> {
  const hooks = new Map<string, Promise<Webhook[]>>();
  const hooksOf = (tid: string) => {
    let h = hooks.get(tid);
    if (!h) {
      h = withTenant(tid, () => listWebhooks(tid));
      hooks.set(tid, h);
    }
    return h;
  };
  let events = 0;
  let messages = 0;
  let failedAt: number | undefined;
  /** The accounts to seal, the index of their first audit record in the batch, and their inserted entries. */
  const audited = new Map<string, { first: number; entries: { pk: string; sk: string }[] }>();
  /** Each account's oldest inserted entry (sk): the sealer looks back at least to it. */
  const oldest = new Map<string, string>();
  for (const [i, record] of records.entries()) {
    const key = keyOf(record);
    if ((record.eventName === 'INSERT' || record.eventName === 'MODIFY') && keys.parseLease(key.pk, key.sk)) {
      try {
        await listLease(key);
      } catch (error) {
        logger.warn('lease listing failed; the stream retries it', { error: error as Error });
        failedAt = i;
        break;
      }
      continue;
    }
    if (record.eventName !== 'INSERT') continue;
    if (key.pk.startsWith('T#') && key.sk.startsWith(keys.tokenKeyPrefix)) {
      // a key put on a function's own credentials came listed: only a tenant session's needs it
      if (record.dynamodb?.NewImage?.platpk !== undefined) continue;
      try {
        await listTokenKey(key);
      } catch (error) {
        logger.warn('token key listing failed; the stream retries it', { error: error as Error });
        failedAt = i;
        break;
      }
      continue;
    }
    if (key.sk.startsWith(keys.auditPrefix)) {
      const tid = key.pk.slice(2);
      const account = audited.get(tid) ?? { first: i, entries: [] };
      account.entries.push(key);
      audited.set(tid, account);
      if (key.sk < (oldest.get(tid) ?? '~')) oldest.set(tid, key.sk);
      continue;
    }
    if (!key.sk.startsWith(keys.outboxPrefix)) continue;
    try {
      messages += await withTenant(key.pk.slice(2), () => relayEvent(key, hooksOf));
      events++;
    } catch (error) {
      logger.warn('outbox relay: event not relayed; the stream retries it', { error: error as Error, sk: key.sk });
      failedAt = i;
      break;
    }
  }
  let sealed = 0;
  for (const [tid, { first, entries }] of audited) {
    if (failedAt !== undefined && first >= failedAt) continue; // retried with the failed record
    try {
      sealed += await sealAndList(tid, entries, oldest.get(tid));
    } catch (error) {
      logger.warn('audit sealing failed; the stream retries it', { error: error as Error });
      failedAt = Math.min(failedAt ?? first, first);
    }
  }
  const failed = failedAt === undefined ? undefined : records[failedAt]?.dynamodb?.SequenceNumber;
  return { batchItemFailures: failed ? [{ itemIdentifier: failed }] : [], events, messages, sealed };
}

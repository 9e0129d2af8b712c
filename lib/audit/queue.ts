import { PutCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/v4';
import { ACTOR_TYPES } from '../auth/principal.js';
import { config } from '../config.js';
import { serviceUnavailable } from '../core/errors.js';
import { logger } from '../core/logger.js';
import { count, METRIC } from '../core/metrics.js';
import { UUID_RE } from '../ids.js';
import { db, tableName } from '../store/client.js';
import { keys } from '../store/keys.js';
import { withTenant } from '../tenancy/scope.js';
import { auditMac, auditMacValid, senderAuditKey, writerAuditKey } from './queue-key.js';

/**
 * The audit queue (docs/architecture.md, "Tenancy in IAM"; docs/operations.md, "Audit").
 *
 * A read-only route (grant `audit:send`, derived in lib/routes.ts) holds no table write, so
 * it cannot write its audit entries (a denied request, a sensitive read) itself: recordAudit
 * (lib/audit/audit.ts) sends the entry here with one SendMessage before the route answers
 * (the entry is durable in SQS when the response leaves), and the audit writer
 * (functions/audit/writer.ts, the queue's event source) writes it as the very item the
 * direct path writes: a put conditional on attribute_not_exists(pk), so a redelivered
 * message is a no-op (the entry id is the item's key). The writer works in the entry's
 * tenant scope (lib/tenancy): its tenant-access role allows only PutItem on `T#<tenant>`
 * with the audit entry's attributes. The entry's insert reaches the sealer on the table's
 * stream like any other (lib/events/relay.ts).
 *
 * Message v2 (issue 31): the entry, authenticated by its tenant's session:
 * `{"v":2,"entry":"<the entry's JSON>","key":"<wrapped audit data key, base64>","mac":"<HMAC-SHA256, base64url>"}`.
 * The entry is `{id, at, tenant_id, actor, action, resource, outcome, request_id, source_ip,
 * user_agent[, detail]}` — metadata only, never a value, key or token (the entry's own rule),
 * carried as the exact string the MAC covers. The key is a data key of the entry's tenant,
 * generated with the context `{tenant_id, purpose: "audit-queue"}` through the sender's
 * tenant session (lib/audit/queue-key.ts); the writer opens it with the context of the tenant
 * the entry claims and verifies the MAC, so every function that may send to the queue can
 * still write only into its own session's tenant. The writer refuses anything else: a v1
 * message (`{"v":1,"entry":{…}}`, unauthenticated, so possibly forged: refused, not
 * migrated; none is in flight once every sender runs v2, and a refused one waits in the
 * dead-letter queue), a MAC that does not verify, a key that does not open under the claimed
 * tenant's context. A refusal counts METRIC.auditRefused and logs the message id and the
 * reason, never the entry.
 */

/** The queue's settings, shared by infra/data-stack.ts and the source runtime (scripts/local/start.ts). */
export const AUDIT_QUEUE = {
  /** The writer's timeout; SQS's rule for a Lambda consumer: visibility timeout at least 6 times it. */
  writerTimeoutSeconds: 30,
  visibilityTimeoutSeconds: 180,
  /** A message the writer refused (or failed on) this many times goes to the dead-letter queue. */
  maxReceiveCount: 5,
  retentionDays: 4,
  deadLetterRetentionDays: 14,
  batchSize: 10,
} as const;

const Text = (max: number) => z.string().min(1).max(max);

/** An audit entry as lib/audit/audit.ts `auditPut` builds it, without the keys (the writer derives them). */
const AuditEntryMessage = z.strictObject({
  id: z.string().regex(UUID_RE),
  at: z.iso.datetime(),
  tenant_id: z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/),
  actor: z.strictObject({
    type: z.enum(ACTOR_TYPES),
    id: Text(256),
    user: z.string().max(320).nullable().optional(),
    tenant_id: z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/),
  }),
  action: z
    .string()
    .regex(/^[a-z][a-z0-9_-]*(\.[a-z0-9_-]+)+$/)
    .max(128),
  resource: z.strictObject({ type: Text(64), id: Text(1024), name: z.string().max(1024).optional() }),
  outcome: z.enum(['success', 'denied', 'failure']),
  request_id: Text(256),
  source_ip: z.string().max(64).nullable(),
  user_agent: z.string().max(1024).nullable(),
  detail: z.record(z.string(), z.unknown()).optional(),
});
export type AuditEntryMessage = z.infer<typeof AuditEntryMessage>;

/** The message as sent: the entry's JSON with its tenant's wrapped audit key and the MAC over it. */
const AuditMessage = z.strictObject({
  v: z.literal(2),
  entry: z.string().min(2).max(200_000),
  key: z.base64().min(1).max(2048),
  mac: z.base64url().length(43),
});

/** The message body of an entry (its item without keys; undefined fields dropped as JSON drops them), authenticated. */
async function auditMessageBody(entry: AuditEntryMessage): Promise<string> {
  const json = JSON.stringify(entry);
  const { key, wrapped } = await senderAuditKey(entry.tenant_id);
  return JSON.stringify({ v: 2, entry: json, key: wrapped, mac: auditMac(key, json) });
}

/** Sends one entry to the audit queue; resolves once SQS has stored it. */
export async function sendAuditEntry(entry: AuditEntryMessage): Promise<void> {
  const queueUrl = config().AUDIT_QUEUE_URL;
  // fail closed: a read-only route cannot write the entry itself, and answers nothing unaudited
  if (!queueUrl) throw serviceUnavailable('the audit queue is not configured (AUDIT_QUEUE_URL)');
  const body = await auditMessageBody(entry);
  const { sendMessage } = await import('./sqs-send.js');
  await sendMessage(config().AWS_REGION, queueUrl, body);
}

/** The part of an SQS record the writer reads (aws-lambda's SQSRecord). */
interface QueueRecord {
  readonly messageId: string;
  readonly body: string;
}

type Written = 'written' | 'duplicate' | 'refused' | 'failed';

interface Parsed {
  readonly entry: AuditEntryMessage;
  readonly json: string;
  readonly key: string;
  readonly mac: string;
}

const issuesOf = (error: z.ZodError, prefix = '') => error.issues.map((i) => `${prefix}${i.path.join('.') || '(message)'}: ${i.code}`);

function parse(body: string): Parsed | { issues: string[] } {
  const json = (text: string): { ok: true; value: unknown } | { ok: false } => {
    try {
      return { ok: true, value: JSON.parse(text) };
    } catch {
      return { ok: false };
    }
  };
  const message = json(body);
  if (!message.ok) return { issues: ['not JSON'] };
  const v = (message.value as { v?: unknown } | null)?.v;
  if (v === 1) return { issues: ['v: version 1 messages carry no authentication and are refused'] };
  const out = AuditMessage.safeParse(message.value);
  // the paths and codes of what is wrong, never the values
  if (!out.success) return { issues: issuesOf(out.error) };
  const entry = json(out.data.entry);
  if (!entry.ok) return { issues: ['entry: not JSON'] };
  const parsed = AuditEntryMessage.safeParse(entry.value);
  if (!parsed.success) return { issues: issuesOf(parsed.error, 'entry.') };
  return { entry: parsed.data, json: out.data.entry, key: out.data.key, mac: out.data.mac };
}

function refuse(record: QueueRecord, reason: string, issues?: string[]): Written {
  count(METRIC.auditRefused);
  logger.warn('audit writer: refused a message', { message_id: record.messageId, reason, ...(issues ? { issues: issues.slice(0, 10) } : {}) });
  return 'refused';
}

/**
 * Writes one message's entry in its tenant's scope: the item of the direct path, once, if its
 * MAC verifies under an audit key of the tenant the entry claims.
 */
async function writeOne(record: QueueRecord): Promise<Written> {
  const message = parse(record.body);
  if ('issues' in message) return refuse(record, 'not an audit entry message', message.issues);
  const { entry } = message;
  return withTenant(entry.tenant_id, async (): Promise<Written> => {
    let key: Buffer;
    try {
      key = await writerAuditKey(entry.tenant_id, message.key);
    } catch (error) {
      // the key does not open under the claimed tenant's context: generated for another
      // tenant (or not a key at all). Any other error (KMS throttled, unreachable) is a failure.
      const name = (error as Error).name;
      if (name === 'InvalidCiphertextException' || /unable to authenticate|unrecognised wrapped/i.test((error as Error).message)) {
        return refuse(record, "the audit key is not a key of the entry's tenant");
      }
      logger.warn('audit writer: audit key not opened; the queue redelivers the message', { message_id: record.messageId, error: error as Error });
      return 'failed';
    }
    if (!auditMacValid(key, message.json, message.mac)) return refuse(record, 'the MAC does not verify');
    try {
      await db().send(
        new PutCommand({
          TableName: tableName(),
          Item: { ...keys.audit(entry.tenant_id, entry.id), ...entry },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      return 'written';
    } catch (error) {
      if ((error as Error).name === 'ConditionalCheckFailedException') return 'duplicate';
      logger.warn('audit writer: entry not written; the queue redelivers it', { message_id: record.messageId, error: error as Error });
      return 'failed';
    }
  });
}

/**
 * The audit writer's batch (functions/audit/writer.ts): every message written or refused on
 * its own; the refused and failed ones are reported as batch item failures, so SQS redelivers
 * them and, after AUDIT_QUEUE.maxReceiveCount receives, parks them in the dead-letter queue.
 */
export async function writeAuditMessages(
  records: readonly QueueRecord[],
): Promise<{ batchItemFailures: { itemIdentifier: string }[]; outcomes: Written[] }> {
  const outcomes = await Promise.all(records.map(writeOne));
  return {
    batchItemFailures: records.filter((_, i) => outcomes[i] === 'refused' || outcomes[i] === 'failed').map((r) => ({ itemIdentifier: r.messageId })),
    outcomes,
  };
}

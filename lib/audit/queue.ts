import { PutCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/v4';
import { ACTOR_TYPES } from '../auth/principal.js';
import { config } from '../config.js';
import { serviceUnavailable } from '../core/errors.js';
import { logger } from '../core/logger.js';
import { UUID_RE } from '../ids.js';
import { db, tableName } from '../store/client.js';
import { keys } from '../store/keys.js';
import { withTenant } from '../tenancy/scope.js';

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
 * The message is the entry and nothing else: `{"v":1,"entry":{id, at, tenant_id, actor,
 * action, resource, outcome, request_id, source_ip, user_agent[, detail]}}` — metadata only,
 * never a value, key or token (the entry's own rule). The writer refuses anything else.
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

const AuditMessage = z.strictObject({ v: z.literal(1), entry: AuditEntryMessage });

/** The message body of an entry (its item without keys; undefined fields dropped as JSON drops them). */
function auditMessageBody(entry: AuditEntryMessage): string {
  return JSON.stringify({ v: 1, entry });
}

/** Sends one entry to the audit queue; resolves once SQS has stored it. */
export async function sendAuditEntry(entry: AuditEntryMessage): Promise<void> {
  const queueUrl = config().AUDIT_QUEUE_URL;
  // fail closed: a read-only route cannot write the entry itself, and answers nothing unaudited
  if (!queueUrl) throw serviceUnavailable('the audit queue is not configured (AUDIT_QUEUE_URL)');
  const { sendMessage } = await import('./sqs-send.js');
  await sendMessage(config().AWS_REGION, queueUrl, auditMessageBody(entry));
}

/** The part of an SQS record the writer reads (aws-lambda's SQSRecord). */
interface QueueRecord {
  readonly messageId: string;
  readonly body: string;
}

type Written = 'written' | 'duplicate' | 'refused' | 'failed';

function parse(body: string): AuditEntryMessage | { issues: string[] } {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { issues: ['not JSON'] };
  }
  const out = AuditMessage.safeParse(json);
  // the paths and codes of what is wrong, never the values
  return out.success ? out.data.entry : { issues: out.error.issues.map((i) => `${i.path.join('.') || '(message)'}: ${i.code}`) };
}

/** Writes one message's entry in its tenant's scope: the item of the direct path, once. */
async function writeOne(record: QueueRecord): Promise<Written> {
  const entry = parse(record.body);
  if ('issues' in entry) {
    logger.warn('audit writer: refused a message that is not an audit entry', { message_id: record.messageId, issues: entry.issues.slice(0, 10) });
    return 'refused';
  }
  try {
    await withTenant(entry.tenant_id, () =>
      db().send(
        new PutCommand({
          TableName: tableName(),
          Item: { ...keys.audit(entry.tenant_id, entry.id), ...keys.auditIndex(entry.id), ...entry },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
    return 'written';
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') return 'duplicate';
    logger.warn('audit writer: entry not written; the queue redelivers it', { message_id: record.messageId, error: error as Error });
    return 'failed';
  }
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

import { newId, nowIso } from '../ids.js';
import { keys } from '../store/keys.js';
import { tableName } from '../store/client.js';
import { transact, type TxItem } from '../store/tx.js';
import { eventPut } from '../events/outbox.js';
import type { EventType } from '../events/catalogue.js';
import type { CallContext } from '../auth/principal.js';

export interface AuditResource {
  readonly type: string;
  readonly id: string;
  readonly name?: string;
}

export interface Change {
  /** The audit action, e.g. `secret.update`. */
  readonly action: string;
  readonly resource: AuditResource;
  /** The outbox event the change emits, with its metadata payload (never values). */
  readonly event?: { readonly type: EventType; readonly data: Record<string, unknown> };
  /** Extra metadata for the audit entry (never values). */
  readonly detail?: Record<string, unknown>;
}

/** The audit entry of a successful change, as a transaction item. */
export function auditPut(ctx: CallContext, tenantId: string, change: Change): { id: string; item: TxItem } {
  const id = newId();
  const p = ctx.principal;
  return {
    id,
    item: {
      Put: {
        TableName: tableName(),
        Item: {
          ...keys.audit(tenantId, id),
          ...keys.auditIndex(id),
          id,
          at: nowIso(),
          tenant_id: tenantId,
          actor: { type: p.operator && p.tenantId !== tenantId ? 'operator' : p.kind, id: p.id, user: p.user, tenant_id: p.tenantId },
          action: change.action,
          resource: change.resource,
          outcome: 'success',
          request_id: ctx.requestId,
          source_ip: ctx.sourceIp,
          user_agent: ctx.userAgent,
          ...(change.detail ? { detail: change.detail } : {}),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
  };
}

/**
 * Commits a change: its items, its audit entry and its outbox event in one
 * TransactWriteItems, so all land together or none do. Returns the audit entry's id.
 */
export async function commit(ctx: CallContext, tenantId: string, items: TxItem[], change: Change): Promise<string> {
  const audit = auditPut(ctx, tenantId, change);
  const all = [...items, audit.item];
  if (change.event) all.push(eventPut(tenantId, change.event.type, change.event.data));
  await transact(all);
  return audit.id;
}

import { newId, nowIso } from '../ids.js';
import { AsyncLocalStorage } from 'node:async_hooks';
import { transact, type TxItem } from '../store/tx.js';
import { eventPut } from '../outbox/outbox.js';
import { admitted } from '../core/admission.js';
import type { EventType } from '../outbox/catalogue.js';
import type { CallContext } from '../auth/principal.js';
import type { Route } from '../routes.js';
import { sendAuditEntry, type AuditEntryMessage } from './queue.js';
import { auditItem, putAuditEntry } from './store.js';

interface AuditResource {
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
  /** `success` (default) for committed changes; `denied` / `failure` for refused or failed attempts (recordAudit). */
  readonly outcome?: 'success' | 'denied' | 'failure';
}

/** The audit entry of a successful change, as a transaction item. */
export function auditPut(ctx: CallContext, tenantId: string, change: Change): { id: string; item: TxItem } {
  const id = newId();
  const p = ctx.principal;
  return {
    id,
    item: {
      Put: auditItem(tenantId, id, {
        id,
        at: nowIso(),
        tenant_id: tenantId,
        // `operator` only matters (and is only read) for an entry in another account than the caller's
        actor: { type: p.tenantId !== tenantId && p.operator ? 'operator' : p.kind, id: p.id, user: p.user, tenant_id: p.tenantId },
        action: change.action,
        resource: change.resource,
        outcome: change.outcome ?? 'success',
        request_id: ctx.requestId,
        source_ip: ctx.sourceIp,
        user_agent: ctx.userAgent,
        ...(change.detail ? { detail: change.detail } : {}),
      }),
    },
  };
}

/**
 * Commits a change: its items, its audit entry and its outbox event in one
 * TransactWriteItems, so all land together or none do. Returns the audit entry's id.
 */
export async function commit(ctx: CallContext, tenantId: string, items: TxItem[], change: Change): Promise<string> {
  return (await commitWithIds(ctx, tenantId, items, change)).auditId;
}

/** As commit(), returning the ids of both the audit entry and the outbox event. */
export async function commitWithIds(
  ctx: CallContext,
  tenantId: string,
  items: TxItem[],
  change: Change,
): Promise<{ auditId: string; eventId?: string }> {
  // a speculative handler run commits nothing before its request is admitted (lib/core/admission.ts)
  await admitted();
  const audit = auditPut(ctx, tenantId, change);
  const all = [...items, audit.item];
  const event = change.event ? eventPut(tenantId, change.event.type, change.event.data) : undefined;
  if (event) all.push(event);
  await transact(all);
  return { auditId: audit.id, ...(event ? { eventId: event.Put!.Item!.id as string } : {}) };
}

/**
 * The route a request of defineHandler serves (lib/http/define-handler.ts enters it): what
 * recordAudit reads to know whether the function may write the table. Outside it (background
 * workers, a test calling the library) entries are written directly.
 */
const routes = new AsyncLocalStorage<Pick<Route, 'key' | 'grants'>>();

/** Runs `fn` as a request of `route` (recordAudit takes the route's audit path from its grants). */
export function auditRouteScope<T>(route: Pick<Route, 'key' | 'grants'>, fn: () => T): T {
  return routes.run(route, fn);
}

/**
 * An audit entry on its own (no change to commit): a denied request, a sensitive read
 * (an export, a sync with values). Returns the entry's id.
 *
 * Where it goes depends on the route (lib/routes.ts, grant `audit:send`): a read-only route
 * holds no table write (docs/architecture.md, "Tenancy in IAM"), so its entry goes to the
 * audit queue, one SendMessage awaited before the route answers (lib/audit/queue.ts), and
 * the audit writer writes it shortly after; every other caller (routes with table:write,
 * background workers) puts the item itself, synchronously.
 */
export async function recordAudit(ctx: CallContext, tenantId: string, change: Change): Promise<string> {
  // a speculative handler run sends or writes nothing before its request is admitted
  await admitted();
  const audit = auditPut(ctx, tenantId, change);
  if (routes.getStore()?.grants.includes('audit:send')) {
    const { pk: _pk, sk: _sk, ...entry } = audit.item.Put!.Item as Record<string, unknown>;
    await sendAuditEntry(entry as unknown as AuditEntryMessage);
    return audit.id;
  }
  await putAuditEntry(audit.item);
  return audit.id;
}

import type { CallContext } from '../auth/principal.js';
import { commit, commitWithIds } from '../audit/audit.js';
import { BlockedDestination, checkWebhookUrl } from '../events/ssrf.js';
import {
  getWebhook,
  listWebhooks as list,
  newSigningSecret,
  sealSigningSecret,
  toDelivery,
  type Delivery,
  type Webhook,
} from '../events/webhooks.js';
import { badRequest, conflict, notFound } from '../core/errors.js';
import { newId, nowIso } from '../ids.js';
import { accountSettings } from '../settings/settings.js';
import { tableName } from '../store/client.js';
import { keys, tenantPk } from '../store/keys.js';
import { queryPage } from '../store/pagination.js';
import { TxConditionFailed, type TxItem } from '../store/tx.js';
import { counterAdd, quotaExceeded } from '../store/usage.js';
import type { CreateWebhookBody, DeliveriesQuery } from './schemas.js';

/** The URL as shown in events and audit entries: no query or fragment (they may hold tokens). */
const displayUrl = (u: URL) => `${u.protocol}//${u.host}${u.pathname}`;

/** Concurrent creates of one account meet on its counters item; a transaction conflict is retried. */
async function withRetry<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if (!(error instanceof TxConditionFailed && error.conflict) || attempt >= 6) throw error;
      await new Promise((r) => setTimeout(r, Math.random() * 20 * attempt));
    }
  }
}

export async function createWebhook(ctx: CallContext, body: CreateWebhookBody): Promise<Webhook & { signing_secret: string }> {
  const p = ctx.principal;
  const tid = p.tenantId;
  let url: URL;
  try {
    url = await checkWebhookUrl(body.url, { allowLoopback: accountSettings(p.tenant).webhooks.allow_loopback });
  } catch (error) {
    if (error instanceof BlockedDestination) {
      throw badRequest(`webhook URL refused: ${error.message}`, [{ path: 'body.url', message: error.message }], 'webhook_url_refused');
    }
    throw error;
  }
  const at = nowIso();
  const webhook: Webhook = {
    id: newId(),
    url: url.href,
    events: [...new Set(body.events)],
    description: body.description,
    enabled: body.enabled,
    created_at: at,
    created_by: p.user ?? `${p.kind}:${p.id}`,
    updated_at: at,
  };
  const secret = newSigningSecret();
  const items: TxItem[] = [
    {
      Put: {
        TableName: tableName(),
        Item: { ...keys.webhook(tid, webhook.id), ...webhook, secret: await sealSigningSecret(tid, webhook.id, secret) },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    counterAdd(tid, 'webhooks', 1, p.tenant.quota.max_webhooks),
  ];
  try {
    await withRetry(() =>
      commit(ctx, tid, items, {
        action: 'webhook.create',
        resource: { type: 'webhook', id: webhook.id, name: displayUrl(url) },
        detail: { events: webhook.events, enabled: webhook.enabled },
        event: { type: 'webhook.created', data: { id: webhook.id, url: displayUrl(url), events: webhook.events } },
      }),
    );
  } catch (error) {
    if (error instanceof TxConditionFailed && error.index === 1) throw quotaExceeded(p.tenant.quota.max_webhooks, 'webhooks');
    throw error;
  }
  return { ...webhook, signing_secret: secret };
}

export const listWebhooks = (ctx: CallContext) => list(ctx.principal.tenantId);

async function requireWebhook(ctx: CallContext, id: string): Promise<Webhook> {
  const found = await getWebhook(ctx.principal.tenantId, id);
  if (!found) throw notFound('webhook');
  return found.webhook;
}

export async function listDeliveries(ctx: CallContext, id: string, query: DeliveriesQuery): Promise<{ deliveries: Delivery[]; nextCursor?: string }> {
  await requireWebhook(ctx, id);
  const page = await queryPage<Record<string, unknown>>({
    pk: tenantPk(ctx.principal.tenantId),
    prefix: keys.deliveryPrefix(id),
    limit: query.limit,
    cursor: query.cursor,
    newestFirst: true,
  });
  return { deliveries: page.items.map(toDelivery), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
}

/** Emits a `webhook.test` event for this webhook only; the pipeline delivers it like any event. */
export async function testWebhook(ctx: CallContext, id: string): Promise<{ event_id: string; webhook_id: string }> {
  const webhook = await requireWebhook(ctx, id);
  if (!webhook.enabled) throw conflict('the webhook is disabled', 'webhook_disabled');
  const { eventId } = await commitWithIds(ctx, ctx.principal.tenantId, [], {
    action: 'webhook.test',
    resource: { type: 'webhook', id },
    event: { type: 'webhook.test', data: { webhook_id: id, message: 'test event from POST /api/v1/webhooks/{id}/test' } },
  });
  return { event_id: eventId!, webhook_id: id };
}

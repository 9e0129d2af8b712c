import { defineHandler, ok, created } from '../../lib/http/index.js';
import { listPage } from '../../lib/schemas.js';
import { CreateWebhookBody, DeliveriesQuery, TestBody, WebhookParams } from './schemas.js';
import { createWebhook, listDeliveries, listWebhooks, testWebhook } from './service.js';

export const list = defineHandler({
  async handler({ ctx }) {
    const webhooks = await listWebhooks(ctx);
    return ok({ webhooks, total: webhooks.length });
  },
});

/** The signing secret (Standard Webhooks `whsec_…`) is in this response only. */
export const create = defineHandler({
  body: CreateWebhookBody,
  async handler({ ctx, body }) {
    return created({ webhook: await createWebhook(ctx, body) });
  },
});

export const deliveries = defineHandler({
  params: WebhookParams,
  query: DeliveriesQuery,
  async handler({ ctx, params, query }) {
    const page = await listDeliveries(ctx, params.id, query);
    return ok(listPage('deliveries', page.deliveries, page.nextCursor));
  },
});

export const test = defineHandler({
  params: WebhookParams,
  body: TestBody,
  async handler({ ctx, params }) {
    return { status: 202, data: await testWebhook(ctx, params.id) };
  },
});

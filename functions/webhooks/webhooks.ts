import { defineHandler, ok, created } from '../../lib/http/index.js';
import { listPage } from '../../lib/schemas.js';
import {
  CreateWebhookBody,
  DeliveriesQuery,
  DeliveryPage,
  TestBody,
  TestQueued,
  WebhookCreated,
  WebhookList,
  WebhookParams,
} from '../../lib/webhooks/schemas.js';
import { createWebhook, listDeliveries, listWebhooks, testWebhook } from '../../lib/webhooks/service.js';

export const list = defineHandler({
  summary: 'List webhooks',
  responses: { 200: WebhookList },
  async handler({ ctx }) {
    const webhooks = await listWebhooks(ctx);
    return ok({ webhooks, total: webhooks.length });
  },
});

/** The signing secret (Standard Webhooks `whsec_…`) is in this response only. */
export const create = defineHandler({
  summary: 'Create a webhook',
  description:
    'Registers a URL to receive the account’s events (Standard Webhooks signatures). The URL must resolve to a public address. The signing secret is returned in this response only.',
  responses: { 201: WebhookCreated },
  errors: ['webhook_url_refused', 'quota_exceeded'],
  body: CreateWebhookBody,
  async handler({ ctx, body }) {
    return created({ webhook: await createWebhook(ctx, body) });
  },
});

export const deliveries = defineHandler({
  summary: 'List webhook deliveries',
  description: 'The deliveries of one webhook, newest first, with each attempt (status code, latency, error).',
  responses: { 200: DeliveryPage },
  errors: ['not_found', 'bad_request'],
  params: WebhookParams,
  query: DeliveriesQuery,
  async handler({ ctx, params, query }) {
    const page = await listDeliveries(ctx, params.id, query);
    return ok(listPage('deliveries', page.deliveries, page.nextCursor));
  },
});

export const test = defineHandler({
  summary: 'Send a test event to a webhook',
  description: 'Queues a `webhook.test` event for this webhook only; it is delivered like any event (see its deliveries).',
  responses: { 202: TestQueued },
  errors: ['not_found', 'webhook_disabled'],
  params: WebhookParams,
  body: TestBody,
  async handler({ ctx, params }) {
    return { status: 202, data: await testWebhook(ctx, params.id) };
  },
});

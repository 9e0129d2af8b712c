import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { config } from '../config.js';
import { logger } from '../core/logger.js';
import { accountSettings } from '../settings/settings.js';
import { getTenant } from '../store/tenants.js';
import type { QueuePort, ReceivedMessage } from './queue.js';
import { BlockedDestination, checkUrl, guardedLookup, resolveChecked, type GuardOptions } from './ssrf.js';
import { webhookAttemptMs } from './timeouts.js';
import { claimDelivery, getWebhook, markDead, openSigningSecret, recordAttempt, type Attempt } from './webhooks.js';
import { withTenant } from '../tenancy/scope.js';

/**
 * The delivery worker (docs/architecture.md, "Events"). One queue message = one event for one webhook:
 * the worker claims the delivery record (an event already delivered or dead is dropped, so
 * a re-sent message is delivered at most once more only if the first attempt's outcome was
 * never recorded), signs the body with the Standard Webhooks scheme (`webhook-id` = the
 * event id, stable across retries; `webhook-timestamp`; `webhook-signature: v1,<base64
 * HMAC-SHA256 of "<id>.<timestamp>.<body>">`, via the `standardwebhooks` package), posts it
 * with a timeout through the SSRF guard (DNS checked at connect time, redirects never
 * followed), records the attempt, and answers what the queue should do: ack, retry after an
 * exponential backoff with jitter, or dead-letter after the account's max attempts.
 */
export interface WebhookEvent {
  readonly id: string;
  readonly type: string;
  readonly timestamp: string;
  readonly tenant_id: string;
  readonly data: Record<string, unknown>;
}

export interface DeliveryMessage {
  readonly v: 1;
  readonly tenant_id: string;
  readonly webhook_id: string;
  readonly event: WebhookEvent;
}

type Outcome = { readonly action: 'ack' } | { readonly action: 'retry'; readonly delayMs: number } | { readonly action: 'dead' };

/** Backoff before attempt n + 1: base · 2^(n-1), capped, with "equal jitter" (half fixed, half random). */
export function backoffMs(attempt: number, base = config().WEBHOOK_RETRY_BASE_MS, cap = config().WEBHOOK_RETRY_MAX_MS, random = Math.random): number {
  const ceiling = Math.min(cap, base * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

const USER_AGENT = 'secrets-api-webhooks/1';
const MAX_RESPONSE_BYTES = 64 * 1024;

interface PostResult {
  readonly status_code: number | null;
  readonly error: string | null;
  readonly latency_ms: number;
}

/** One POST to a receiver: no redirects, a hard timeout, the response body read and dropped. */
export async function postWebhook(
  url: URL,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
  guard: GuardOptions,
): Promise<PostResult> {
  const started = Date.now();
  const done = (status: number | null, error: string | null): PostResult => ({ status_code: status, error, latency_ms: Date.now() - started });
  try {
    checkUrl(url.href, guard.allowLoopback);
    await resolveChecked(url.hostname, guard); // IP literals never reach the lookup below
  } catch (error) {
    return done(null, error instanceof BlockedDestination ? `destination not allowed: ${error.message}` : `DNS: ${(error as Error).message}`);
  }
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<PostResult>((resolve) => {
    let settled = false;
    const finish = (r: PostResult) => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        resolve(r);
      }
    };
    const req = send(url, {
      method: 'POST',
      agent: false,
      lookup: guardedLookup(guard) as never,
      headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': USER_AGENT },
    });
    const timer = setTimeout(() => {
      req.destroy();
      finish(done(null, `timeout after ${timeoutMs} ms`));
    }, timeoutMs);
    req.on('response', (res: IncomingMessage) => {
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_RESPONSE_BYTES) res.destroy();
      });
      const end = () => {
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) finish(done(status, null));
        else if (status >= 300 && status < 400) finish(done(status, `redirect not followed (HTTP ${status})`));
        else finish(done(status, `HTTP ${status}`));
      };
      res.on('end', end);
      res.on('close', end);
      res.on('error', end);
    });
    req.on('error', (error: Error) =>
      finish(
        done(
          null,
          error instanceof BlockedDestination
            ? `destination not allowed: ${error.message}`
            : `connection failed: ${(error as NodeJS.ErrnoException).code ?? error.message}`,
        ),
      ),
    );
    req.end(body);
  });
}

/** Handles one message: at most one attempt, recorded. */
async function deliver(msg: DeliveryMessage): Promise<Outcome> {
  const tid = msg.tenant_id;
  const tenant = await getTenant(tid);
  if (!tenant) return { action: 'ack' };
  const found = await getWebhook(tid, msg.webhook_id);
  if (!found) return { action: 'ack' };
  if (!found.webhook.enabled) {
    await markDead(tid, msg.webhook_id, msg.event.id, 'webhook disabled');
    return { action: 'ack' };
  }
  const settings = accountSettings(tenant).webhooks;
  const timeoutMs = webhookAttemptMs(settings.timeout_seconds);
  const claim = await claimDelivery(tid, msg.webhook_id, msg.event, Date.now() + timeoutMs + 10_000);
  if (claim.state !== 'claimed') return claim.state === 'done' ? { action: 'ack' } : { action: 'retry', delayMs: timeoutMs + 10_000 };
  const attemptNo = claim.attemptCount + 1;

  const body = JSON.stringify({ id: msg.event.id, type: msg.event.type, timestamp: msg.event.timestamp, tenant_id: tid, data: msg.event.data });
  const secret = await openSigningSecret(tid, msg.webhook_id, found.sealedSecret);
  const at = new Date();
  const signature = new StandardWebhook(secret).sign(msg.event.id, at, body);
  const headers = { 'webhook-id': msg.event.id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature };
  const result = await postWebhook(new URL(found.webhook.url), body, headers, timeoutMs, { allowLoopback: settings.allow_loopback });

  const attempt: Attempt = {
    attempt: attemptNo,
    at: at.toISOString(),
    status_code: result.status_code,
    latency_ms: result.latency_ms,
    error: result.error,
  };
  if (result.error === null) {
    await recordAttempt(tid, msg.webhook_id, msg.event.id, attempt, 'succeeded', null);
    return { action: 'ack' };
  }
  if (attemptNo >= settings.max_attempts) {
    await recordAttempt(tid, msg.webhook_id, msg.event.id, attempt, 'dead', null);
    return { action: 'dead' };
  }
  const delayMs = backoffMs(attemptNo);
  await recordAttempt(tid, msg.webhook_id, msg.event.id, attempt, 'retrying', new Date(Date.now() + delayMs).toISOString());
  return { action: 'retry', delayMs };
}

function parseMessage(body: string): DeliveryMessage | undefined {
  try {
    const m = JSON.parse(body) as DeliveryMessage;
    return m &&
      m.v === 1 &&
      typeof m.tenant_id === 'string' &&
      m.tenant_id !== '' &&
      typeof m.webhook_id === 'string' &&
      typeof m.event?.id === 'string'
      ? m
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Processes one received message against the queue port. `lambda`: the SQS event source
 * deletes what succeeds, so success is simply returning true; a retry changes the message's
 * visibility and returns false (a batch item failure). `poll` (local runtime): deletes itself.
 * An unexpected error leaves the message alone: it comes back after the visibility timeout.
 */
export async function processMessage(q: QueuePort, m: ReceivedMessage, mode: 'lambda' | 'poll'): Promise<boolean> {
  const msg = parseMessage(m.body);
  let outcome: Outcome;
  try {
    // the message names its account: the delivery runs in that account's tenant session
    // (infra/background.ts WebhookWorker, tenantAccess 'grants'), never on the worker's own role
    outcome = msg ? await withTenant(msg.tenant_id, () => deliver(msg)) : { action: 'dead' };
  } catch (error) {
    logger.error('webhook delivery failed', { message_id: m.messageId, error: error as Error });
    return false;
  }
  if (outcome.action === 'retry') {
    await q.changeVisibility(m.receiptHandle, outcome.delayMs);
    return false;
  }
  if (outcome.action === 'dead') await q.sendToDeadLetter(m.body);
  if (mode === 'poll') await q.delete(m.receiptHandle);
  return true;
}

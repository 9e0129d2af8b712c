import { createHash } from 'node:crypto';
import type { MiddlewareObj, Request } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { Principal } from '../auth/principal.js';
import { header } from '../authn/authenticate.js';
import { openJson, sealJson } from '../crypto/envelope.js';
import { deleteIdempotencyItem, holdIdempotencyKey, readIdempotencyItem, recordIdempotentResponse } from './store.js';
import { badRequest, conflict } from '../core/errors.js';

/**
 * `Idempotency-Key` on mutations (docs/api.md, "Conventions"): the first request with a key runs and its
 * successful response is kept for 24 h, sealed like any secret (a response may carry a new
 * key or a value); a retry with the same key and the same request gets that response again,
 * marked `Idempotent-Replayed: true`, without running twice. The same key with a different
 * request, or while the first is still running, is a 409. An error response releases the
 * key, so the client may correct the request or retry. Keys are per credential.
 */
const TTL_SECONDS = 24 * 3600;
const MUTATIONS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const KEY_RE = /^[\x21-\x7e]{1,255}$/;

interface Held {
  readonly tenantId: string;
  readonly id: string;
}

type Req = Request<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>;

const fingerprint = (event: APIGatewayProxyEvent) =>
  createHash('sha256')
    .update(`${event.httpMethod} ${event.resource}\n${JSON.stringify(event.pathParameters ?? {})}\n${JSON.stringify(event.queryStringParameters ?? {})}\n`)
    .update(event.body ?? '')
    .digest('hex');

const scope = (h: Held) => ({ tenantId: h.tenantId, type: 'idempotency', id: h.id, version: 1 });

export function idempotency(
  principalOf: (request: Req) => Principal | null,
  /** Resolves once the request is admitted (a speculative run's admission, lib/core/admission.ts): the record is written after it. */
  admittedOf: (request: Req) => Promise<void> = () => Promise.resolve(),
): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context> {
  const held = new WeakMap<APIGatewayProxyEvent, Held>();
  const release = async (request: Req) => {
    const h = held.get(request.event);
    if (h) await deleteIdempotencyItem(h.tenantId, h.id);
  };
  return {
    before: async (request) => {
      const { event } = request;
      const key = header(event.headers ?? {}, 'idempotency-key');
      const principal = principalOf(request);
      if (key === undefined || !principal || !MUTATIONS.has(event.httpMethod)) return undefined;
      if (!KEY_RE.test(key)) throw badRequest('Idempotency-Key must be 1-255 printable characters', undefined, 'invalid_idempotency_key');
      await admittedOf(request);
      const h: Held = { tenantId: principal.tenantId, id: createHash('sha256').update(`${principal.kind}:${principal.id}:${key}`).digest('hex') };
      const print = fingerprint(event);
      const now = Math.floor(Date.now() / 1000);
      if (await holdIdempotencyKey(h.tenantId, h.id, print, now, TTL_SECONDS)) {
        held.set(event, h);
        return undefined;
      }
      const prior = await readIdempotencyItem(h.tenantId, h.id);
      if (!prior || prior.fingerprint !== print) {
        throw conflict('this Idempotency-Key was used with a different request', 'idempotency_key_reused');
      }
      if (prior.state !== 'done') throw conflict('a request with this Idempotency-Key is still in progress', 'idempotency_in_progress');
      const stored = await openJson<APIGatewayProxyResult>(scope(h), prior.response as Uint8Array);
      return { ...stored, headers: { ...stored.headers, 'Idempotent-Replayed': 'true' } };
    },
    after: async (request) => {
      const h = held.get(request.event);
      const response = request.response;
      if (!h || !response) return;
      if (response.statusCode >= 400) return release(request);
      await recordIdempotentResponse(h.tenantId, h.id, await sealJson(scope(h), response));
    },
    /** A failed request releases its key; its error response is not kept. */
    onError: async (request) => {
      await release(request).catch(() => undefined);
    },
  };
}

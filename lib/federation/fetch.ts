import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockedDestination, checkUrl, guardedLookup, resolveChecked, type GuardOptions } from '../events/ssrf.js';

/**
 * The GET of a JWK set URL through the webhook SSRF guard (lib/events/ssrf.ts): the URL
 * rules, the addresses checked at connection time, no redirects, a hard timeout and a
 * size cap. The answer's caching headers say how long the set may be used before the next
 * fetch: `Cache-Control: max-age` (or `no-store`/`no-cache`: 0), else `Expires`, bounded to
 * [MIN_TTL, MAX_TTL]; `ETag` and `Last-Modified` make the next fetch conditional.
 */
const TIMEOUT_MS = 5000;
const MAX_BYTES = 256 * 1024;
const MIN_TTL_S = 60;
const MAX_TTL_S = 86_400;
const DEFAULT_TTL_S = 3600;

export interface Fetched {
  /** 200 with a body, or 304 (not modified: keep the stored keys). */
  readonly status: 200 | 304;
  readonly body?: string;
  readonly etag: string | null;
  readonly lastModified: string | null;
  /** Until when the result may be used without a new fetch. */
  readonly cacheUntil: string;
}

export class FetchFailed extends Error {}

export function cacheSeconds(headers: IncomingMessage['headers'], now = Date.now()): number {
  const cc = String(headers['cache-control'] ?? '').toLowerCase();
  let ttl: number | undefined;
  if (/\b(no-store|no-cache)\b/.test(cc)) ttl = 0;
  else {
    const m = /\bmax-age=(\d+)/.exec(cc);
    if (m) ttl = Number(m[1]);
    else if (headers.expires) {
      const at = Date.parse(String(headers.expires));
      if (!Number.isNaN(at)) ttl = Math.round((at - now) / 1000);
    }
  }
  return Math.min(MAX_TTL_S, Math.max(MIN_TTL_S, ttl ?? DEFAULT_TTL_S));
}

export async function fetchJwks(raw: string, guard: GuardOptions, previous?: { etag: string | null; lastModified: string | null }): Promise<Fetched> {
  let url: URL;
  try {
    url = checkUrl(raw, guard.allowLoopback);
    await resolveChecked(url.hostname, guard);
  } catch (error) {
    throw new FetchFailed(error instanceof BlockedDestination ? `destination not allowed: ${error.message}` : 'the host name does not resolve');
  }
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const headers: Record<string, string> = { accept: 'application/jwk-set+json, application/json', 'user-agent': 'secrets-api-jwks/1' };
  if (previous?.etag) headers['if-none-match'] = previous.etag;
  if (previous?.lastModified) headers['if-modified-since'] = previous.lastModified;
  return new Promise<Fetched>((resolve, reject) => {
    const req = send(url, { method: 'GET', agent: false, lookup: guardedLookup(guard) as never, headers });
    const timer = setTimeout(() => req.destroy(new FetchFailed(`timeout after ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
    const fail = (error: Error) => {
      clearTimeout(timer);
      reject(
        error instanceof FetchFailed
          ? error
          : new FetchFailed(error instanceof BlockedDestination ? `destination not allowed: ${error.message}` : 'connection failed'),
      );
    };
    req.on('error', fail);
    req.on('response', (res: IncomingMessage) => {
      const status = res.statusCode ?? 0;
      const meta = {
        etag: typeof res.headers.etag === 'string' ? res.headers.etag : null,
        lastModified: typeof res.headers['last-modified'] === 'string' ? res.headers['last-modified'] : null,
        cacheUntil: new Date(Date.now() + cacheSeconds(res.headers) * 1000).toISOString(),
      };
      if (status === 304 && previous) {
        res.resume();
        clearTimeout(timer);
        resolve({ status: 304, ...meta, etag: meta.etag ?? previous.etag, lastModified: meta.lastModified ?? previous.lastModified });
        return;
      }
      if (status !== 200) {
        res.resume();
        fail(new FetchFailed(status >= 300 && status < 400 ? `redirect not followed (HTTP ${status})` : `HTTP ${status}`));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_BYTES) req.destroy(new FetchFailed(`the JWK set exceeds ${MAX_BYTES} bytes`));
        else chunks.push(c);
      });
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: 200, body: Buffer.concat(chunks).toString('utf8'), ...meta });
      });
      res.on('error', fail);
    });
    req.end();
  });
}

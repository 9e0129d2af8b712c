import type { IncomingHttpHeaders } from 'node:http';
import { guardedRequest, OutboundFailed } from '../events/outbound.js';
import type { GuardOptions } from '../events/ssrf.js';
import { outboundTimeoutMs } from '../events/timeouts.js';

/**
 * The GET of a JWK set URL through the guarded outbound request (lib/events/outbound.ts):
 * the URL rules, the addresses checked at connection time, no redirects, a hard timeout and
 * a size cap. The answer's caching headers say how long the set may be used before the next
 * fetch: `Cache-Control: max-age` (or `no-store`/`no-cache`: 0), else `Expires`, bounded to
 * [MIN_TTL, MAX_TTL]; `ETag` and `Last-Modified` make the next fetch conditional.
 */
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

export function cacheSeconds(headers: IncomingHttpHeaders, now = Date.now()): number {
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
  const headers: Record<string, string> = { accept: 'application/jwk-set+json, application/json', 'user-agent': 'secrets-api-jwks/1' };
  if (previous?.etag) headers['if-none-match'] = previous.etag;
  if (previous?.lastModified) headers['if-modified-since'] = previous.lastModified;
  const res = await guardedRequest(raw, guard, { headers, timeoutMs: outboundTimeoutMs('jwks'), maxBytes: MAX_BYTES });
  const meta = {
    etag: typeof res.headers.etag === 'string' ? res.headers.etag : null,
    lastModified: typeof res.headers['last-modified'] === 'string' ? res.headers['last-modified'] : null,
    cacheUntil: new Date(Date.now() + cacheSeconds(res.headers) * 1000).toISOString(),
  };
  if (res.status === 304 && previous) {
    return { status: 304, ...meta, etag: meta.etag ?? previous.etag, lastModified: meta.lastModified ?? previous.lastModified };
  }
  if (res.status !== 200) throw new OutboundFailed(`HTTP ${res.status}`);
  return { status: 200, body: res.body.toString('utf8'), ...meta };
}

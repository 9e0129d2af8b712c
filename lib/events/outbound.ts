import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockedDestination, checkUrl, guardedLookup, resolveChecked, type GuardOptions } from './ssrf.js';

/**
 * THE outbound HTTP request of the service's fetches (an account's JWK set URL, its identity
 * provider, the breach range API, an IPFS node) through the SSRF guard (./ssrf.ts): http(s)
 * only, no embedded credentials, every address the name resolves to checked when the
 * connection is made, no redirects followed, a hard timeout and a cap on the answer's size.
 * Every failure is an OutboundFailed whose message says why and is safe to show.
 */
export class OutboundFailed extends Error {}

const reason = (error: unknown, otherwise: string): string =>
  error instanceof OutboundFailed ? error.message : error instanceof BlockedDestination ? `destination not allowed: ${error.message}` : otherwise;

/** The URL rules and the name's current addresses. */
export async function checkedUrl(raw: string, guard: GuardOptions): Promise<URL> {
  try {
    const url = checkUrl(raw, guard.allowLoopback);
    await resolveChecked(url.hostname, guard);
    return url;
  } catch (error) {
    throw new OutboundFailed(reason(error, 'the host name does not resolve'));
  }
}

export interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

interface RequestOptions {
  readonly method?: 'GET' | 'POST';
  readonly headers?: Record<string, string>;
  readonly body?: string;
  readonly timeoutMs: number;
  readonly maxBytes: number;
}

/** One request through the guard; a 3xx answer is refused (redirects are not followed). */
export async function guardedRequest(raw: string, guard: GuardOptions, opts: RequestOptions): Promise<Answer> {
  const url = await checkedUrl(raw, guard);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<Answer>((resolve, reject) => {
    const req = send(url, { method: opts.method ?? 'GET', agent: false, lookup: guardedLookup(guard) as never, headers: opts.headers ?? {} });
    const timer = setTimeout(() => req.destroy(new OutboundFailed(`timeout after ${opts.timeoutMs} ms`)), opts.timeoutMs);
    const fail = (error: unknown) => {
      clearTimeout(timer);
      reject(new OutboundFailed(reason(error, 'connection failed')));
    };
    req.on('error', fail);
    req.on('response', (res: IncomingMessage) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && status !== 304) {
        res.resume();
        fail(new OutboundFailed(`redirect not followed (HTTP ${status})`));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > opts.maxBytes) req.destroy(new OutboundFailed(`the answer exceeds ${opts.maxBytes} bytes`));
        else chunks.push(c);
      });
      res.on('error', fail);
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status, headers: res.headers, body: Buffer.concat(chunks) });
      });
    });
    req.end(opts.body);
  });
}

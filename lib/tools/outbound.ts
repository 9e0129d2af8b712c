import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { config } from '../config.js';
import { BlockedDestination, checkUrl, guardedLookup, resolveChecked, type GuardOptions } from '../events/ssrf.js';

/**
 * Outbound HTTP of the tool routes (the breach range API, the IPFS node's RPC API) through
 * the webhook SSRF guard (lib/events/ssrf.ts): http(s) only, no embedded credentials, every
 * address the name resolves to checked at connection time, no redirects, a hard timeout and
 * a size cap. Loopback only with TOOLS_ALLOW_LOOPBACK (the local runtime; refused with KMS).
 */
export class OutboundFailed extends Error {}

export const toolGuard = (): GuardOptions => ({ allowLoopback: config().TOOLS_ALLOW_LOOPBACK });

/** The URL rules and the name's current addresses; throws OutboundFailed with the reason. */
export async function checkedUrl(raw: string): Promise<URL> {
  try {
    const url = checkUrl(raw, toolGuard().allowLoopback);
    await resolveChecked(url.hostname, toolGuard());
    return url;
  } catch (error) {
    throw new OutboundFailed(error instanceof BlockedDestination ? `destination not allowed: ${error.message}` : 'the host name does not resolve');
  }
}

export interface Answer {
  readonly status: number;
  readonly body: Buffer;
}

/** One GET through the guard. */
export async function guardedGet(raw: string, headers: Record<string, string>, opts: { timeoutMs: number; maxBytes: number }): Promise<Answer> {
  const url = await checkedUrl(raw);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<Answer>((resolve, reject) => {
    const req = send(url, { method: 'GET', agent: false, lookup: guardedLookup(toolGuard()) as never, headers });
    const timer = setTimeout(() => req.destroy(new OutboundFailed(`timeout after ${opts.timeoutMs} ms`)), opts.timeoutMs);
    const fail = (error: Error) => {
      clearTimeout(timer);
      reject(error instanceof OutboundFailed ? error : new OutboundFailed('connection failed'));
    };
    req.on('error', fail);
    req.on('response', (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > opts.maxBytes) req.destroy(new OutboundFailed(`answer larger than ${opts.maxBytes} bytes`));
        else chunks.push(c);
      });
      res.on('error', fail);
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) });
      });
    });
    req.end();
  });
}

import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockedDestination, checkUrl, guardedLookup, resolveChecked, type GuardOptions } from '../events/ssrf.js';

/**
 * The identity provider's endpoints (discovery, JWK set, token) through the webhook SSRF
 * guard (lib/events/ssrf.ts): http(s) only, the addresses checked at connection time, no
 * redirects followed, a hard timeout and a size cap. Answers are JSON.
 */
const TIMEOUT_MS = 5000;
const MAX_BYTES = 256 * 1024;

export class IdpRequestFailed extends Error {}

export async function idpJson(
  raw: string,
  guard: GuardOptions,
  init: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; json: unknown }> {
  let url: URL;
  try {
    url = checkUrl(raw, guard.allowLoopback);
    await resolveChecked(url.hostname, guard);
  } catch (error) {
    throw new IdpRequestFailed(error instanceof BlockedDestination ? `destination not allowed: ${error.message}` : 'the host name does not resolve');
  }
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const headers = { accept: 'application/json', 'user-agent': 'secrets-api-sso/1', ...init.headers };
  return new Promise((resolve, reject) => {
    const req = send(url, { method: init.method ?? 'GET', agent: false, lookup: guardedLookup(guard) as never, headers });
    const timer = setTimeout(() => req.destroy(new IdpRequestFailed(`timeout after ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
    const fail = (error: Error) => {
      clearTimeout(timer);
      reject(
        error instanceof IdpRequestFailed
          ? error
          : new IdpRequestFailed(error instanceof BlockedDestination ? `destination not allowed: ${error.message}` : 'connection failed'),
      );
    };
    req.on('error', fail);
    req.on('response', (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_BYTES) req.destroy(new IdpRequestFailed(`the answer exceeds ${MAX_BYTES} bytes`));
        else chunks.push(c);
      });
      res.on('end', () => {
        clearTimeout(timer);
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400) return reject(new IdpRequestFailed(`redirect not followed (HTTP ${status})`));
        try {
          resolve({ status, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        } catch {
          reject(new IdpRequestFailed(`HTTP ${status}, not JSON`));
        }
      });
      res.on('error', fail);
    });
    req.end(init.body);
  });
}

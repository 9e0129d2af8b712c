import { guardedRequest, OutboundFailed } from '../events/outbound.js';
import type { GuardOptions } from '../events/ssrf.js';
import { outboundTimeoutMs } from '../events/timeouts.js';

/**
 * The identity provider's endpoints (discovery, JWK set, token) through the guarded outbound
 * request (lib/events/outbound.ts): no redirects, the timeout of a document fetch (lib/events/timeouts.ts), 256 KiB at most. Answers
 * are JSON; anything else is an OutboundFailed.
 */
const MAX_BYTES = 256 * 1024;

export async function idpJson(
  raw: string,
  guard: GuardOptions,
  init: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; json: unknown }> {
  const res = await guardedRequest(raw, guard, {
    ...init,
    headers: { accept: 'application/json', 'user-agent': 'secrets-api-sso/1', ...init.headers },
    timeoutMs: outboundTimeoutMs('identity-provider'),
    maxBytes: MAX_BYTES,
  });
  try {
    return { status: res.status, json: JSON.parse(res.body.toString('utf8')) };
  } catch {
    throw new OutboundFailed(`HTTP ${res.status}, not JSON`);
  }
}

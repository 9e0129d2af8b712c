import { config } from '../config.js';
import { type Answer, checkedUrl as checkedFor, guardedRequest } from '../events/outbound.js';
import type { GuardOptions } from '../events/ssrf.js';

/**
 * Outbound HTTP of the tool routes (the breach range API, the IPFS node's RPC API, LDAP
 * servers): the guarded outbound request (lib/events/outbound.ts) with the tools' guard —
 * loopback only with TOOLS_ALLOW_LOOPBACK (the local runtime; refused with KMS).
 */
export const toolGuard = (): GuardOptions => ({ allowLoopback: config().TOOLS_ALLOW_LOOPBACK });

/** The URL rules and the name's current addresses; throws OutboundFailed with the reason. */
export const checkedUrl = (raw: string): Promise<URL> => checkedFor(raw, toolGuard());

/** One GET through the guard. */
export const guardedGet = (raw: string, headers: Record<string, string>, opts: { timeoutMs: number; maxBytes: number }): Promise<Answer> =>
  guardedRequest(raw, toolGuard(), { headers, ...opts });

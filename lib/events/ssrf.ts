import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * The SSRF guard of outbound webhooks. A receiver must be a public unicast address:
 * refused are loopback, private (RFC 1918, IPv6 unique local), link-local (and with it the
 * 169.254.169.254 / fd00:ec2::254 metadata endpoints), carrier-grade NAT, multicast,
 * broadcast, unspecified (0.0.0.0, ::), reserved and documentation ranges, and IPv6 forms
 * that embed an IPv4 address (IPv4-mapped ::ffff:a.b.c.d is judged by its IPv4 address;
 * IPv4-compatible, NAT64, 6to4 and Teredo are refused). URLs must be http(s) without
 * embedded credentials.
 *
 * The check runs at creation (400) and again at every delivery, on the addresses the name
 * resolves to *at connection time*: the worker's HTTP request uses guardedLookup as its
 * resolver, so the connection goes to exactly the address that was checked (no DNS
 * rebinding between check and connect). Redirects are never followed.
 *
 * `allowLoopback` (an account setting, possible only where config WEBHOOKS_ALLOW_LOOPBACK is
 * on, which config refuses with KMS, i.e. in AWS) admits loopback addresses only.
 */
export class BlockedDestination extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BlockedDestination';
  }
}

export interface GuardOptions {
  readonly allowLoopback: boolean;
  /** The resolver (node:dns lookup signature); the system resolver by default. */
  readonly lookup?: typeof dnsLookup;
}

/** Why an address may not receive webhooks, or null when it may. */
export function addressProblem(address: string, allowLoopback: boolean): string | null {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  } catch {
    return 'not an IP address';
  }
  if (ip.kind() === 'ipv6') {
    const v6 = ip as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return addressProblem(v6.toIPv4Address().toString(), allowLoopback);
    const parts = v6.parts;
    if (parts.slice(0, 6).every((p) => p === 0) && !(parts[6] === 0 && parts[7] === 1) && !parts.every((p) => p === 0)) {
      return 'IPv4-compatible IPv6 address';
    }
  }
  const range = ip.range();
  if (range === 'unicast') return null;
  if (range === 'loopback' && allowLoopback) return null;
  const names: Record<string, string> = {
    loopback: 'loopback',
    private: 'private',
    uniqueLocal: 'private (unique local)',
    linkLocal: 'link-local / metadata',
    carrierGradeNat: 'carrier-grade NAT',
    multicast: 'multicast',
    broadcast: 'broadcast',
    unspecified: 'unspecified',
  };
  return `${names[range] ?? `special-purpose (${range})`} address`;
}

const LOCALHOST_RE = /^(localhost|.*\.localhost)\.?$/i;

/**
 * Syntax and literal checks of a receiver URL: http(s), no user info, a host; an IP literal
 * host is checked here. Throws BlockedDestination with the reason.
 */
export function checkUrl(raw: string, allowLoopback: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BlockedDestination('not a valid URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new BlockedDestination(`scheme ${url.protocol.replace(/:$/, '')} is not allowed (http or https only)`);
  if (url.username || url.password) throw new BlockedDestination('URLs with embedded credentials are not allowed');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!host) throw new BlockedDestination('the URL has no host');
  if (isIP(host)) {
    const problem = addressProblem(host, allowLoopback);
    if (problem) throw new BlockedDestination(`destination ${host} is a ${problem}`);
  } else if (LOCALHOST_RE.test(host) && !allowLoopback) {
    throw new BlockedDestination(`destination ${host} is a loopback name`);
  }
  return url;
}

/** Resolves a host name and checks every address; IP literals are checked as they are. */
export async function resolveChecked(host: string, opts: GuardOptions): Promise<LookupAddress[]> {
  const bare = host.replace(/^\[|\]$/g, '');
  if (isIP(bare)) {
    const problem = addressProblem(bare, opts.allowLoopback);
    if (problem) throw new BlockedDestination(`destination ${bare} is a ${problem}`);
    return [{ address: bare, family: isIP(bare) }];
  }
  const lookup = opts.lookup ?? dnsLookup;
  const addresses = await new Promise<LookupAddress[]>((ok, fail) =>
    lookup(bare, { all: true, verbatim: true }, (error, result) => (error ? fail(error) : ok(result as LookupAddress[]))),
  );
  if (addresses.length === 0) throw new Error(`${bare} did not resolve`);
  for (const a of addresses) {
    const problem = addressProblem(a.address, opts.allowLoopback);
    if (problem) throw new BlockedDestination(`${bare} resolves to ${a.address}, a ${problem}`);
  }
  return addresses;
}

/**
 * A `lookup` for http.request: resolves, refuses if any address is not allowed, and hands
 * the checked address(es) to the socket, so it connects to what was checked.
 */
export function guardedLookup(opts: GuardOptions) {
  return (hostname: string, options: { all?: boolean } | number, callback: (...args: unknown[]) => void): void => {
    const all = typeof options === 'object' && options?.all === true;
    resolveChecked(hostname, opts).then(
      (addresses) => (all ? callback(null, addresses) : callback(null, addresses[0]!.address, addresses[0]!.family)),
      (error: unknown) => callback(error),
    );
  };
}

/**
 * The create-time check: URL rules, then the name's current addresses. A name that does
 * not resolve (yet) is accepted: every delivery resolves and checks again.
 */
export async function checkWebhookUrl(raw: string, opts: GuardOptions): Promise<URL> {
  const url = checkUrl(raw, opts.allowLoopback);
  try {
    await resolveChecked(url.hostname, opts);
  } catch (error) {
    if (error instanceof BlockedDestination) throw error;
  }
  return url;
}

import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { admitted } from '../core/admission.js';

/**
 * THE destination classifier of every outbound path: webhooks, JWK sets by URL, identity
 * providers (SSO), customer databases, LDAP servers, ACME directories, IPFS nodes, the breach
 * range API. Each path calls addressProblem / resolveChecked / guardedLookup from here and
 * classifies no address itself.
 *
 * A destination must be a public unicast address: refused are loopback, private (RFC 1918,
 * IPv6 unique local), link-local (and with it the 169.254.169.254 / fd00:ec2::254 metadata
 * endpoints), carrier-grade NAT, multicast, broadcast, unspecified (0.0.0.0, ::), reserved and
 * documentation ranges, and IPv6 forms that embed an IPv4 address (IPv4-mapped ::ffff:a.b.c.d
 * is judged by its IPv4 address; IPv4-compatible, NAT64, 6to4 and Teredo are refused). IPv4
 * literals are read as the system resolver reads them (inet_aton: octal 012.0.0.1, hex
 * 0xa.0.0.1, decimal 167772161, short 10.1 forms) so that no spelling slips past. URLs must
 * be http(s) without embedded credentials.
 *
 * The check runs at creation (400) and again at every connection, on the addresses the name
 * resolves to *at connection time*: the request uses guardedLookup as its resolver, so the
 * connection goes to exactly the address that was checked (no DNS rebinding between check and
 * connect). Redirects are never followed.
 *
 * No destination is resolved, so no connection made, before the request is admitted (lib/core/admission.ts:
 * a suspended account, a caller over its quota or outside its IP allow-list never makes the
 * service reach out, even from a speculative handler run).
 *
 * Two exceptions, neither ever in a tenant's hands:
 * - `allowLoopback`: loopback only, where the deployment's config allows it (the local
 *   runtime's *_ALLOW_LOOPBACK flags, which config refuses with KMS, i.e. in AWS);
 * - `privateNetworks`: the CIDR blocks the platform operator opened for one account (config
 *   DATABASE_PRIVATE_NETWORKS, a customer database in a VPC): a private, unique-local or
 *   carrier-grade NAT address inside one of them is admitted; nothing else is (a listed
 *   link-local or loopback block admits nothing).
 */
export class BlockedDestination extends Error {
  /** `message` says where; `reason` is the classifier's verdict alone (e.g. "private address"). */
  constructor(
    message: string,
    readonly reason?: string,
  ) {
    super(message);
    this.name = 'BlockedDestination';
  }
}

/** What a path may reach beyond public unicast addresses (see above: never set by a tenant). */
interface DestinationPolicy {
  readonly allowLoopback: boolean;
  /** CIDR blocks of private addresses opened by the platform operator for the calling account. */
  readonly privateNetworks?: readonly string[];
}

export interface GuardOptions extends DestinationPolicy {
  /** The resolver (node:dns lookup signature); the system resolver by default. */
  readonly lookup?: typeof dnsLookup;
}

const bareHost = (host: string): string => host.replace(/^\[|\]$/g, '').replace(/%.*$/, '');

/**
 * The address an IP literal names, in canonical form, read as the system resolver would
 * (octal, hex, decimal and short IPv4 forms included), or null when `host` is a name.
 */
export function literalAddress(host: string): string | null {
  const bare = bareHost(host);
  if (isIP(bare)) return bare;
  // inet_aton forms: digits, hex digits, x and dots only (a name has a letter beyond a-f/x)
  if (!/^[0-9a-fx.]+$/i.test(bare) || !/^(0x[0-9a-f]*|[0-9]+)(\.(0x[0-9a-f]*|[0-9]+)){0,3}$/i.test(bare)) return null;
  try {
    return ipaddr.IPv4.parse(bare).toString();
  } catch {
    return null;
  }
}

const OPENABLE = new Set(['private', 'uniqueLocal', 'carrierGradeNat']);

function inNetworks(ip: ipaddr.IPv4 | ipaddr.IPv6, networks: readonly string[]): boolean {
  return networks.some((cidr) => {
    try {
      const [range, bits] = ipaddr.parseCIDR(cidr);
      return range.kind() === ip.kind() && ip.match(range as never, bits);
    } catch {
      return false;
    }
  });
}

/** Why an address may not be connected to, or null when it may. `policy` as a boolean is `allowLoopback`. */
export function addressProblem(address: string, policy: boolean | DestinationPolicy): string | null {
  const { allowLoopback, privateNetworks = [] } = typeof policy === 'boolean' ? { allowLoopback: policy } : policy;
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(literalAddress(address) ?? bareHost(address));
  } catch {
    return 'not an IP address';
  }
  if (ip.kind() === 'ipv6') {
    const v6 = ip as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return addressProblem(v6.toIPv4Address().toString(), policy);
    const parts = v6.parts;
    if (parts.slice(0, 6).every((p) => p === 0) && !(parts[6] === 0 && parts[7] === 1) && !parts.every((p) => p === 0)) {
      return 'IPv4-compatible IPv6 address';
    }
  }
  const range = ip.range();
  if (range === 'unicast') return null;
  if (range === 'loopback' && allowLoopback) return null;
  if (OPENABLE.has(range) && inNetworks(ip, privateNetworks)) return null;
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
export function checkUrl(raw: string, policy: boolean | DestinationPolicy): URL {
  const allowLoopback = typeof policy === 'boolean' ? policy : policy.allowLoopback;
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
    const problem = addressProblem(host, policy);
    if (problem) throw new BlockedDestination(`destination ${host} is a ${problem}`);
  } else if (LOCALHOST_RE.test(host) && !allowLoopback) {
    throw new BlockedDestination(`destination ${host} is a loopback name`);
  }
  return url;
}

/** Resolves a host name and checks every address; IP literals are checked as they are. */
export async function resolveChecked(host: string, opts: GuardOptions): Promise<LookupAddress[]> {
  await admitted();
  const bare = host.replace(/^\[|\]$/g, '');
  const literal = literalAddress(bare);
  if (literal) {
    const problem = addressProblem(literal, opts);
    if (problem) throw new BlockedDestination(`destination ${bare} is a ${problem}`, problem);
    return [{ address: literal, family: isIP(literal) }];
  }
  const lookup = opts.lookup ?? dnsLookup;
  const addresses = await new Promise<LookupAddress[]>((ok, fail) =>
    lookup(bare, { all: true, verbatim: true }, (error, result) => (error ? fail(error) : ok(result as LookupAddress[]))),
  );
  if (addresses.length === 0) throw new Error(`${bare} did not resolve`);
  for (const a of addresses) {
    const problem = addressProblem(a.address, opts);
    if (problem) throw new BlockedDestination(`${bare} resolves to ${a.address}, a ${problem}`, problem);
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
  const url = checkUrl(raw, opts);
  try {
    await resolveChecked(url.hostname, opts);
  } catch (error) {
    if (error instanceof BlockedDestination) throw error;
  }
  return url;
}

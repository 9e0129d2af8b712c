import { beforeAll, describe, expect, it } from 'vitest';
import { useRuntimeConfig } from '../helpers/in-process.js';

/**
 * One destination classifier for every outbound path (lib/events/ssrf.ts): the same table of
 * addresses — private, carrier-grade NAT, link-local, IPv4 in octal, hex, decimal and short
 * forms, IPv6 unique local, IPv4-mapped IPv6 — is refused by each path's own entry point
 * (webhooks, JWK sets by URL, SSO, customer databases, the tool routes' guard for LDAP, IPFS
 * and the breach API, ACME's and the payment provider's resolver), before any connection.
 * A customer database on a private address is admitted only inside a block the platform
 * operator opened for that account (config DATABASE_PRIVATE_NETWORKS).
 */
const ACCOUNT = '0198a7e0-0000-7000-8000-00000000a001';
const OTHER = '0198a7e0-0000-7000-8000-00000000b002';

let ssrf: typeof import('../../lib/events/ssrf.js');
let outbound: typeof import('../../lib/events/outbound.js');
let fetchJwks: typeof import('../../lib/federation/fetch.js').fetchJwks;
let idpJson: typeof import('../../lib/sso/http.js').idpJson;
let tools: typeof import('../../lib/tools/outbound.js');
let session: typeof import('../../lib/database/session.js');
let DatabaseError: typeof import('../../lib/database/errors.js').DatabaseError;

beforeAll(async () => {
  useRuntimeConfig();
  // the operator opened 10.20.0.0/16 for ACCOUNT only (and, to no effect, the metadata block)
  process.env.DATABASE_PRIVATE_NETWORKS = JSON.stringify({ [ACCOUNT]: ['10.20.0.0/16', 'fd00:20::/32', '169.254.0.0/16'] });
  process.env.DATABASE_CONNECT_TIMEOUT_MS = '300';
  ssrf = await import('../../lib/events/ssrf.js');
  outbound = await import('../../lib/events/outbound.js');
  ({ fetchJwks } = await import('../../lib/federation/fetch.js'));
  ({ idpJson } = await import('../../lib/sso/http.js'));
  tools = await import('../../lib/tools/outbound.js');
  session = await import('../../lib/database/session.js');
  ({ DatabaseError } = await import('../../lib/database/errors.js'));
});

/** Host spellings that all name a non-public address. */
const REFUSED: readonly (readonly [string, string])[] = [
  ['10.0.0.1', 'private'],
  ['172.16.5.4', 'private'],
  ['192.168.1.1', 'private'],
  ['100.64.0.1', 'carrier-grade NAT'],
  ['169.254.169.254', 'link-local'],
  ['012.0.0.1', 'private'], // octal 10.0.0.1
  ['0300.0250.0.1', 'private'], // octal 192.168.0.1
  ['0xa.0.0.1', 'private'], // hex
  ['0x0a000001', 'private'], // hex, one part
  ['167772161', 'private'], // decimal 10.0.0.1
  ['10.1', 'private'], // short form 10.0.0.1
  ['0251.0376.0251.0376', 'link-local'], // octal 169.254.169.254
  ['[fd00::1]', 'unique local'],
  ['[fd00:ec2::254]', 'unique local'],
  ['[::ffff:10.0.0.1]', 'private'],
  ['[::ffff:a9fe:a9fe]', 'link-local'],
  ['[::ffff:100.64.0.1]', 'carrier-grade NAT'],
];

const bare = (host: string) => host.replace(/^\[|\]$/g, '');

async function refusal(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
    return 'reached';
  } catch (error) {
    return (error as Error).message;
  }
}

describe('the classifier', () => {
  it.each(REFUSED)('%s is a %s address', (host, kind) => {
    expect(ssrf.addressProblem(bare(host), false)).toContain(kind);
    expect(ssrf.addressProblem(bare(host), { allowLoopback: true })).toContain(kind);
  });

  it('reads IPv4 literals as the system resolver does, and leaves names alone', () => {
    expect(ssrf.literalAddress('012.0.0.1')).toBe('10.0.0.1');
    expect(ssrf.literalAddress('0x7f.1')).toBe('127.0.0.1');
    expect(ssrf.literalAddress('2130706433')).toBe('127.0.0.1');
    expect(ssrf.literalAddress('[::1]')).toBe('::1');
    for (const name of ['db.example.com', 'deadbeef.example', 'cafe', 'face.b00c']) expect(ssrf.literalAddress(name), name).toBeNull();
    expect(ssrf.addressProblem('93.184.216.34', false)).toBeNull();
  });
});

describe('every outbound path refuses the table before connecting', () => {
  const guard = { allowLoopback: false } as const;

  it.each(REFUSED)('%s (%s)', async (host, kind) => {
    const url = `https://${host}/x`;
    // webhooks (create-time check; deliveries go through the same guardedLookup)
    expect(await refusal(() => ssrf.checkWebhookUrl(url, guard)), 'webhook').toContain(kind);
    // ACME (its directory URL and every connection of its agent) and the payment provider's agent
    expect(() => ssrf.checkUrl(url, false), 'acme').toThrow(kind);
    const looked = await new Promise<string>((done) =>
      ssrf.guardedLookup(guard)(bare(host), { all: true }, (error: unknown) => done(error ? (error as Error).message : 'resolved')),
    );
    expect(looked, 'payment provider / ACME agent lookup').toContain(kind);
    // JWK sets by URL, the identity provider's endpoints
    expect(await refusal(() => fetchJwks(url, guard)), 'jwks').toContain(kind);
    expect(await refusal(() => idpJson(url, guard)), 'sso').toContain(kind);
    // the tool routes (LDAP, IPFS, the breach range API) share one guard
    expect(await refusal(() => tools.checkedUrl(url)), 'tools').toContain(kind);
    expect(await refusal(() => ssrf.resolveChecked(host, tools.toolGuard())), 'ldap').toContain(kind);
    expect(await refusal(() => outbound.guardedRequest(url, guard, { timeoutMs: 200, maxBytes: 10 })), 'outbound').toContain(kind);
    // customer databases, whatever account: none opened this address
    for (const tenantId of [undefined, OTHER]) {
      const error = await session
        .openAdminSession({ id: 'c', tenantId, engine: 'postgresql', host, port: 5432, database: null, username: 'u', password: 'p', tls: { mode: 'disable' } })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(error, `database ${host}`).toBeInstanceOf(DatabaseError);
      expect((error as InstanceType<typeof DatabaseError>).code, `database ${host}`).toBe('BLOCKED_ADDRESS');
      expect((error as Error).message).toContain(kind);
    }
  });
});

describe('a customer database on a private address: only where the platform operator opened it, only for that account', () => {
  const connect = (host: string, tenantId?: string) =>
    session
      .openAdminSession({ id: 'c', tenantId, engine: 'postgresql', host, port: 9, database: null, username: 'u', password: 'p', tls: { mode: 'disable' } })
      .then(
        () => 'connected',
        (e: unknown) => (e as InstanceType<typeof DatabaseError>).code,
      );

  it('a listed private address is admitted for its account (the connection is attempted), refused for another', async () => {
    for (const host of ['10.20.0.9', '012.024.0.9', '[::ffff:10.20.0.9]']) {
      expect(await connect(host, ACCOUNT), host).not.toBe('BLOCKED_ADDRESS');
      expect(await connect(host, OTHER), host).toBe('BLOCKED_ADDRESS');
      expect(await connect(host), host).toBe('BLOCKED_ADDRESS');
    }
  });

  it('outside the listed block, and link-local even when listed, stay refused', async () => {
    for (const host of ['10.21.0.1', '192.168.0.1', '100.64.0.1', '169.254.169.254', '[fd00::1]']) expect(await connect(host, ACCOUNT), host).toBe('BLOCKED_ADDRESS');
  });

  it('the opening is the database path’s alone: webhooks and tools refuse the same address', async () => {
    expect(await refusal(() => ssrf.checkWebhookUrl('https://10.20.0.9/', { allowLoopback: false }))).toContain('private');
    expect(await refusal(() => tools.checkedUrl('https://10.20.0.9/'))).toContain('private');
  });
});

import { createSocket, type Socket } from 'node:dgram';
import { Resolver, type LookupAddress } from 'node:dns';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressProblem, BlockedDestination, checkUrl, checkWebhookUrl, resolveChecked } from '../../lib/events/ssrf.js';

/**
 * A real DNS server on 127.0.0.1 (UDP, A records), so the guard's resolution is tested
 * through the DNS protocol: names resolving to private addresses, a mixed answer, and a
 * name that changes its answer between two lookups (DNS rebinding).
 */
function dnsServer(answers: (name: string, n: number) => string[]): Promise<{ port: number; socket: Socket }> {
  const counts = new Map<string, number>();
  const socket = createSocket('udp4');
  socket.on('message', (msg, rinfo) => {
    let o = 12;
    const labels: string[] = [];
    while (msg[o] !== 0) {
      labels.push(msg.subarray(o + 1, o + 1 + msg[o]!).toString());
      o += msg[o]! + 1;
    }
    const question = msg.subarray(12, o + 5);
    const qtype = msg.readUInt16BE(o + 1);
    const name = labels.join('.').toLowerCase();
    const n = (counts.get(name) ?? 0) + 1;
    counts.set(name, n);
    const ips = qtype === 1 ? answers(name, n) : [];
    const header = Buffer.alloc(12);
    msg.copy(header, 0, 0, 2);
    header.writeUInt16BE(0x8180, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(ips.length, 6);
    const records = ips.map((ip) => {
      const r = Buffer.alloc(16);
      r.writeUInt16BE(0xc00c, 0);
      r.writeUInt16BE(1, 2);
      r.writeUInt16BE(1, 4);
      r.writeUInt32BE(0, 6);
      r.writeUInt16BE(4, 10);
      ip.split('.').forEach((b, i) => r.writeUInt8(Number(b), 12 + i));
      return r;
    });
    socket.send(Buffer.concat([header, question, ...records]), rinfo.port, rinfo.address);
  });
  return new Promise((ok) => socket.bind(0, '127.0.0.1', () => ok({ port: socket.address().port, socket })));
}

let dns: { port: number; socket: Socket };
let lookup: (host: string, options: unknown, cb: (err: Error | null, addrs?: LookupAddress[]) => void) => void;

beforeAll(async () => {
  dns = await dnsServer((name, n) => {
    if (name === 'internal.example.test') return ['10.0.0.1'];
    if (name === 'metadata.example.test') return ['169.254.169.254'];
    if (name === 'public.example.test') return ['93.184.216.34'];
    if (name === 'mixed.example.test') return ['93.184.216.34', '192.168.0.1'];
    if (name === 'rebind.example.test') return n === 1 ? ['93.184.216.34'] : ['127.0.0.1'];
    return [];
  });
  const resolver = new Resolver({ timeout: 2000, tries: 1 });
  resolver.setServers([`127.0.0.1:${dns.port}`]);
  lookup = (host, _options, cb) =>
    resolver.resolve4(host, (err, addrs) =>
      err
        ? cb(err)
        : cb(
            null,
            addrs.map((address) => ({ address, family: 4 })),
          ),
    );
});
afterAll(() => dns.socket.close());

describe('address classes', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fd00:ec2::254', 'unique local'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.2.1', 'reserved'],
    ['::7f00:1', 'IPv4-compatible'],
    ['64:ff9b::a00:1', 'rfc6052'],
    ['2002:a00:1::', '6to4'],
  ])('%s is refused (%s)', (ip, kind) => {
    expect(addressProblem(ip, false)).toContain(kind);
  });

  it('public unicast addresses are allowed; loopback only with the development allowance', () => {
    for (const ip of ['93.184.216.34', '8.8.8.8', '2606:4700::1111', '::ffff:93.184.216.34']) expect(addressProblem(ip, false)).toBeNull();
    expect(addressProblem('127.0.0.1', true)).toBeNull();
    expect(addressProblem('::ffff:127.0.0.1', true)).toBeNull();
    expect(addressProblem('10.0.0.1', true)).toContain('private');
    expect(addressProblem('169.254.169.254', true)).toContain('link-local');
  });
});

describe('URL rules', () => {
  it('refuses other schemes, embedded credentials, loopback names, and IP literals in any notation', () => {
    for (const url of [
      'file:///etc/passwd',
      'gopher://x/',
      'http://user:pass@example.com/',
      'http://user@example.com/',
      'http://localhost/',
      'http://a.localhost/',
      'http://0x7f000001/',
      'http://2130706433/',
      'http://017700000001/',
      'http://[::ffff:127.0.0.1]/',
      'http://[0:0:0:0:0:ffff:7f00:1]/',
      'not a url',
    ]) {
      expect(() => checkUrl(url, false), url).toThrow(BlockedDestination);
    }
    expect(checkUrl('https://hooks.example.com/x?y=1', false).hostname).toBe('hooks.example.com');
    expect(checkUrl('http://127.0.0.1:8080/h', true).port).toBe('8080');
  });
});

describe('resolution through DNS (a real DNS server)', () => {
  it('refuses names resolving to private or metadata addresses, or to any non-public address among several', async () => {
    for (const name of ['internal.example.test', 'metadata.example.test', 'mixed.example.test']) {
      await expect(resolveChecked(name, { allowLoopback: false, lookup: lookup as never }), name).rejects.toThrow(BlockedDestination);
      await expect(checkWebhookUrl(`https://${name}/hook`, { allowLoopback: false, lookup: lookup as never })).rejects.toThrow(/resolves to/);
    }
    expect(await resolveChecked('public.example.test', { allowLoopback: false, lookup: lookup as never })).toEqual([
      { address: '93.184.216.34', family: 4 },
    ]);
  });

  it('a name accepted at creation is refused at delivery once it resolves to loopback (rebinding)', async () => {
    const opts = { allowLoopback: false, lookup: lookup as never };
    await expect(checkWebhookUrl('http://rebind.example.test/h', opts)).resolves.toBeInstanceOf(URL);
    await expect(resolveChecked('rebind.example.test', opts)).rejects.toThrow(/resolves to 127\.0\.0\.1, a loopback/);
  });

  it('an unknown name is accepted at creation (checked again at every delivery)', async () => {
    await expect(checkWebhookUrl('https://unknown.example.test/h', { allowLoopback: false, lookup: lookup as never })).resolves.toBeInstanceOf(URL);
  });
});

describe('delivery', () => {
  let server: Server;
  let hits = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/slow') return; // never answers
      hits++;
      res.writeHead(302, { location: 'http://10.0.0.1/' }).end();
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  });
  afterAll(
    () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  );

  it('connects only to checked addresses, never follows redirects, and times out', async () => {
    process.env.WEBHOOK_RETRY_BASE_MS ??= '1000';
    const { postWebhook } = await import('../../lib/events/delivery.js');
    const port = (server.address() as { port: number }).port;
    const refused = await postWebhook(new URL(`http://internal.example.test:${port}/`), '{}', {}, 2000, {
      allowLoopback: true,
      lookup: lookup as never,
    });
    expect(refused).toMatchObject({ status_code: null });
    expect(refused.error).toMatch(/destination not allowed: internal\.example\.test resolves to 10\.0\.0\.1/);
    const redirected = await postWebhook(new URL(`http://127.0.0.1:${port}/`), '{}', {}, 2000, { allowLoopback: true });
    expect(redirected).toMatchObject({ status_code: 302, error: 'redirect not followed (HTTP 302)' });
    expect(hits).toBe(1);
    const noLoopback = await postWebhook(new URL(`http://127.0.0.1:${port}/`), '{}', {}, 2000, { allowLoopback: false });
    expect(noLoopback.error).toMatch(/destination not allowed/);
    expect(hits).toBe(1);
    const slow = await postWebhook(new URL(`http://127.0.0.1:${port}/slow`), '{}', {}, 300, { allowLoopback: true });
    expect(slow).toMatchObject({ status_code: null, error: 'timeout after 300 ms' });
  });
});

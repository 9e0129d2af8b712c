import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { addressProblem, BlockedDestination, checkUrl, checkWebhookUrl, guardedLookup, resolveChecked } from '../../lib/events/ssrf.js';

/**
 * lib/events/ssrf.ts: the exact reason for each refused address and URL, the IPv6 forms
 * that embed IPv4, and the resolver wrappers with a resolver the test controls (the DNS
 * protocol itself is exercised in webhooks-ssrf.test.ts).
 */
type Lookup = NonNullable<Parameters<typeof resolveChecked>[1]['lookup']>;
const resolver = (answers: Record<string, string[] | Error>): Lookup =>
  ((host: string, _opts: unknown, cb: (e: Error | null, a?: LookupAddress[]) => void) => {
    const a = answers[host];
    if (a instanceof Error) cb(a);
    else cb(null, (a ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
  }) as never;
const blocked = async (p: Promise<unknown>) => {
  try {
    await p;
    return 'resolved';
  } catch (error) {
    return error instanceof BlockedDestination ? `blocked: ${error.message}` : `error: ${(error as Error).message}`;
  }
};

describe('addressProblem: the reason, exactly', () => {
  it.each([
    ['127.0.0.1', 'loopback address'],
    ['10.1.2.3', 'private address'],
    ['fd12::1', 'private (unique local) address'],
    ['169.254.169.254', 'link-local / metadata address'],
    ['100.64.0.1', 'carrier-grade NAT address'],
    ['224.0.0.251', 'multicast address'],
    ['ff02::1', 'multicast address'],
    ['255.255.255.255', 'broadcast address'],
    ['0.0.0.0', 'unspecified address'],
    ['::', 'unspecified address'],
    ['192.0.2.1', 'special-purpose (reserved) address'],
    ['2001:db8::1', 'special-purpose (reserved) address'],
    ['2002:0a00:0001::', 'special-purpose (6to4) address'],
    ['2001::1', 'special-purpose (teredo) address'],
    ['64:ff9b::0808:0808', 'special-purpose (rfc6052) address'],
    ['not-an-ip', 'not an IP address'],
    ['', 'not an IP address'],
  ])('%s: %s', (ip, reason) => {
    expect(addressProblem(ip, false)).toBe(reason);
  });

  it('IPv4-compatible IPv6 (::a.b.c.d in hex) is refused, but not ::1 (loopback) or :: (unspecified)', () => {
    expect(addressProblem('::808:808', false)).toBe('IPv4-compatible IPv6 address');
    expect(addressProblem('::2', false)).toBe('IPv4-compatible IPv6 address');
    expect(addressProblem('::1:0', false)).toBe('IPv4-compatible IPv6 address');
    // (ipaddr.js reads the dotted form ::a.b.c.d as IPv4-mapped: judged by its IPv4 address)
    expect(addressProblem('::10.0.0.1', false)).toBe('private address');
    expect(addressProblem('::1', false)).toBe('loopback address');
    expect(addressProblem('::1', true)).toBeNull();
    expect(addressProblem('1::1', false)).not.toBe('IPv4-compatible IPv6 address');
  });

  it('IPv4-mapped addresses are judged by their IPv4 address; brackets and zone ids are ignored', () => {
    expect(addressProblem('::ffff:8.8.8.8', false)).toBeNull();
    expect(addressProblem('::ffff:10.0.0.1', false)).toBe('private address');
    expect(addressProblem('[::1]', false)).toBe('loopback address');
    expect(addressProblem('fe80::1%eth0', false)).toBe('link-local / metadata address');
    expect(addressProblem('[2606:4700::1111]', false)).toBeNull();
  });

  it('allowLoopback admits loopback only', () => {
    expect(addressProblem('127.0.0.1', true)).toBeNull();
    for (const ip of ['10.0.0.1', '169.254.169.254', '0.0.0.0', '224.0.0.1']) expect(addressProblem(ip, true)).not.toBeNull();
  });
});

describe('checkUrl: the reason, exactly', () => {
  const reason = (url: string, allow = false) => {
    try {
      return checkUrl(url, allow).href;
    } catch (error) {
      expect(error).toBeInstanceOf(BlockedDestination);
      expect((error as Error).name).toBe('BlockedDestination');
      return (error as Error).message;
    }
  };
  it('each refusal', () => {
    expect(reason('::not a url')).toBe('not a valid URL');
    expect(reason('ftp://example.com/')).toBe('scheme ftp is not allowed (http or https only)');
    expect(reason('javascript:alert(1)')).toBe('scheme javascript is not allowed (http or https only)');
    expect(reason('https://user@example.com/')).toBe('URLs with embedded credentials are not allowed');
    expect(reason('https://:pw@example.com/')).toBe('URLs with embedded credentials are not allowed');
    expect(reason('http://10.0.0.1/')).toBe('destination 10.0.0.1 is a private address');
    expect(reason('http://[::1]:8080/')).toBe('destination ::1 is a loopback address');
    expect(reason('http://LOCALHOST/')).toBe('destination localhost is a loopback name');
    expect(reason('http://api.localhost./')).toBe('destination api.localhost. is a loopback name');
  });
  it('accepted: public names and addresses, loopback names and addresses with the allowance', () => {
    expect(reason('https://hooks.example.com/x')).toBe('https://hooks.example.com/x');
    expect(reason('http://8.8.8.8/')).toBe('http://8.8.8.8/');
    expect(reason('http://localhost:3000/', true)).toBe('http://localhost:3000/');
    expect(reason('http://[::1]/', true)).toBe('http://[::1]/');
    expect(reason('https://notlocalhost.example/')).toBe('https://notlocalhost.example/');
    expect(reason('https://localhost.example/')).toBe('https://localhost.example/');
    expect(reason('http://notlocalhost/')).toBe('http://notlocalhost/');
    expect(reason('http://ab.cd.localhost/')).toBe('destination ab.cd.localhost is a loopback name');
  });
});

describe('resolution', () => {
  it('resolveChecked: IP literals are checked as they are (with their family); names are resolved and every address checked', async () => {
    expect(await resolveChecked('8.8.8.8', { allowLoopback: false })).toEqual([{ address: '8.8.8.8', family: 4 }]);
    expect(await resolveChecked('[2606:4700::1111]', { allowLoopback: false })).toEqual([{ address: '2606:4700::1111', family: 6 }]);
    expect(await blocked(resolveChecked('10.0.0.1', { allowLoopback: false }))).toBe('blocked: destination 10.0.0.1 is a private address');
    const lookup = resolver({ 'ok.test': ['93.184.216.34', '2606:4700::1111'], 'mixed.test': ['93.184.216.34', '10.0.0.9'], 'none.test': [], 'fail.test': new Error('ENOTFOUND fail.test') });
    expect(await resolveChecked('ok.test', { allowLoopback: false, lookup })).toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:4700::1111', family: 6 },
    ]);
    expect(await blocked(resolveChecked('mixed.test', { allowLoopback: false, lookup }))).toBe('blocked: mixed.test resolves to 10.0.0.9, a private address');
    expect(await blocked(resolveChecked('none.test', { allowLoopback: false, lookup }))).toBe('error: none.test did not resolve');
    expect(await blocked(resolveChecked('fail.test', { allowLoopback: false, lookup }))).toBe('error: ENOTFOUND fail.test');
  });

  it('resolveChecked asks the resolver for all addresses, verbatim', async () => {
    let asked: unknown;
    const lookup = ((_h: string, opts: unknown, cb: (e: null, a: LookupAddress[]) => void) => {
      asked = opts;
      cb(null, [{ address: '93.184.216.34', family: 4 }]);
    }) as never;
    await resolveChecked('x.test', { allowLoopback: false, lookup });
    expect(asked).toEqual({ all: true, verbatim: true });
  });

  it('guardedLookup hands the socket the checked address (one or all) or the refusal', async () => {
    const lookup = resolver({ 'ok.test': ['93.184.216.34', '93.184.216.35'], 'bad.test': ['127.0.0.1'] });
    const guarded = guardedLookup({ allowLoopback: false, lookup });
    const call = (host: string, options: { all?: boolean } | number) => new Promise<unknown[]>((ok) => guarded(host, options, (...args: unknown[]) => ok(args)));
    expect(await call('ok.test', {})).toEqual([null, '93.184.216.34', 4]);
    expect(await call('ok.test', 4)).toEqual([null, '93.184.216.34', 4]);
    expect(await call('ok.test', null as never)).toEqual([null, '93.184.216.34', 4]);
    expect(await call('ok.test', { all: false })).toEqual([null, '93.184.216.34', 4]);
    expect(await call('ok.test', { all: true })).toEqual([
      null,
      [
        { address: '93.184.216.34', family: 4 },
        { address: '93.184.216.35', family: 4 },
      ],
    ]);
    const [error] = await call('bad.test', {});
    expect(error).toBeInstanceOf(BlockedDestination);
    expect((error as Error).message).toBe('bad.test resolves to 127.0.0.1, a loopback address');
  });

  it('checkWebhookUrl: URL rules, then the current addresses; a name that does not resolve yet is accepted', async () => {
    const lookup = resolver({ 'ok.test': ['93.184.216.34'], 'bad.test': ['169.254.169.254'], 'gone.test': new Error('ENOTFOUND') });
    expect((await checkWebhookUrl('https://ok.test/h', { allowLoopback: false, lookup })).href).toBe('https://ok.test/h');
    expect((await checkWebhookUrl('https://gone.test/h', { allowLoopback: false, lookup })).hostname).toBe('gone.test');
    expect(await blocked(checkWebhookUrl('https://bad.test/h', { allowLoopback: false, lookup }))).toBe('blocked: bad.test resolves to 169.254.169.254, a link-local / metadata address');
    expect(await blocked(checkWebhookUrl('ftp://ok.test/', { allowLoopback: false, lookup }))).toBe('blocked: scheme ftp is not allowed (http or https only)');
  });
});

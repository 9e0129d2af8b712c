import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { CID } from 'multiformats/cid';
import { sha256 } from 'multiformats/hashes/sha2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallContext } from '../../lib/auth/principal.js';
import { handler as jobsWorker } from '../../functions/tools/extraction-worker.js';
import { checkBreach } from '../../lib/tools/breach.js';
import { fetchContent, storeContent } from '../../lib/tools/ipfs.js';
import { parseLdif, writeLdif } from '../../lib/tools/ldif.js';
import { OutboundFailed } from '../../lib/events/outbound.js';
import { guardedGet } from '../../lib/tools/outbound.js';
import { table } from './table.js';

/**
 * The tool modules in this process: IPFS over the Kubo RPC API (a stand-in Kubo that keeps
 * blocks by the CID it computes, and records every request), the LDIF parser's refusals and
 * writer's folding, the outbound guard, the breach check's failures of its range service,
 * and the jobs worker's message handling.
 */
interface KuboRequest {
  path: string;
  params: URLSearchParams;
  body: Buffer;
}
const requests: KuboRequest[] = [];
const blocks = new Map<string, Buffer>();
let mode: 'ok' | 'error' | 'wrong-cid' | 'huge' = 'ok';
let server: Server;
let ctx: CallContext;

const read = (req: IncomingMessage) =>
  new Promise<Buffer>((ok) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => ok(Buffer.concat(chunks)));
  });

/** The one part of a multipart/form-data body. */
function multipartPart(body: Buffer, contentType: string): Buffer {
  const boundary = /boundary=([^;]+)/.exec(contentType)![1]!;
  const start = body.indexOf('\r\n\r\n') + 4;
  const end = body.lastIndexOf(Buffer.from(`\r\n--${boundary}`));
  return body.subarray(start, end);
}

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const url = new URL(req.url!, 'http://x');
    const body = await read(req);
    requests.push({ path: url.pathname, params: url.searchParams, body });
    if (url.pathname.startsWith('/range/')) {
      if (mode === 'error') return void res.writeHead(500).end();
      if (mode === 'huge') return void res.writeHead(200).end(Buffer.alloc(3 * 1024 * 1024, 65));
      return void res.writeHead(200).end('0000000000000000000000000000000000A:0\r\n');
    }
    if (mode === 'error')
      return void res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ Message: 'boom', Code: 0, Type: 'error' }));
    if (url.pathname === '/api/v0/block/put') {
      const bytes = multipartPart(body, String(req.headers['content-type']));
      const codec = url.searchParams.get('cid-codec') === 'dag-pb' ? 0x70 : 0x55;
      const cid = CID.createV1(codec, await sha256.digest(bytes));
      blocks.set(cid.toString(), bytes);
      const key = mode === 'wrong-cid' ? CID.createV1(0x55, await sha256.digest(Buffer.from('other'))).toString() : cid.toString();
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ Key: key, Size: bytes.length }));
    }
    if (url.pathname === '/api/v0/block/get') {
      const found = blocks.get(url.searchParams.get('arg')!);
      if (!found)
        return void res
          .writeHead(500, { 'content-type': 'application/json' })
          .end(JSON.stringify({ Message: 'block not found', Code: 0, Type: 'error' }));
      return void res.writeHead(200).end(found);
    }
    if (url.pathname === '/api/v0/pin/add') {
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ Pins: [url.searchParams.get('arg')] }));
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  Object.assign(process.env, {
    IPFS_API_URL: `http://127.0.0.1:${port}`,
    BREACH_RANGE_URL: `http://127.0.0.1:${port}/range/`,
    TOOLS_ALLOW_LOOPBACK: '1',
  });
  const t = await table();
  const tenantId = await t.account();
  ctx = {
    principal: {
      kind: 'api_key',
      tenantId,
      tenant: { id: tenantId, status: 'active' } as never,
      id: 'k',
      user: null,
      scopes: ['admin:*'],
      operator: false,
    },
    requestId: 'r',
    sourceIp: null,
    userAgent: null,
  };
});

afterAll(() => {
  server?.close();
  server?.closeAllConnections();
});

describe('IPFS over the Kubo RPC API', () => {
  it('puts each block with its codec and sha2-256, pins the root, and never sends the plaintext', async () => {
    mode = 'ok';
    requests.length = 0;
    const plaintext = `kubo ${randomBytes(8).toString('hex')}`;
    const small = await storeContent(ctx, { content: plaintext });
    const puts = requests.filter((r) => r.path === '/api/v0/block/put');
    expect(puts).toHaveLength(1);
    expect(puts[0]!.params.get('cid-codec')).toBe('raw');
    expect(puts[0]!.params.get('mhtype')).toBe('sha2-256');
    const pins = requests.filter((r) => r.path === '/api/v0/pin/add');
    expect(pins.map((p) => [p.params.get('arg'), p.params.get('recursive')])).toEqual([[small.cid, 'true']]);
    expect(requests.some((r) => r.body.includes(Buffer.from(plaintext)))).toBe(false);
    expect((await fetchContent(ctx, { cid: small.cid })) as { content?: string }).toMatchObject({ content: plaintext });

    requests.length = 0;
    const big = randomBytes(300 * 1024);
    const dag = await storeContent(ctx, { content_base64: big.toString('base64') });
    expect(requests.filter((r) => r.path === '/api/v0/block/put').map((r) => r.params.get('cid-codec'))).toEqual(['raw', 'raw', 'dag-pb']);
    expect(CID.parse(dag.cid).code).toBe(0x70);
    const back = (await fetchContent(ctx, { cid: dag.cid })) as { content_base64?: string };
    expect(Buffer.from(back.content_base64!, 'base64').equals(big)).toBe(true);
  });

  it('refuses a block the node changed, a node that stores under another CID, and reports a failing node', async () => {
    mode = 'ok';
    const { cid } = await storeContent(ctx, { content: 'to tamper' });
    blocks.set(cid, Buffer.from('tampered'));
    await expect(fetchContent(ctx, { cid })).rejects.toMatchObject({ status: 502, code: 'content_integrity_failed' });
    await expect(fetchContent(ctx, { cid: CID.createV1(0x55, await sha256.digest(Buffer.from('never stored'))).toString() })).rejects.toMatchObject({
      status: 404,
    });
    await expect(fetchContent(ctx, { cid: 'QmNotACid' })).rejects.toMatchObject({ status: 400 });
    mode = 'wrong-cid';
    await expect(storeContent(ctx, { content: 'x' })).rejects.toMatchObject({ status: 502, code: 'content_integrity_failed' });
    mode = 'error';
    await expect(storeContent(ctx, { content: 'x' })).rejects.toMatchObject({ status: 503 });
    await expect(fetchContent(ctx, { cid })).rejects.toMatchObject({ status: 503 });
    mode = 'ok';
  });
});

describe('breach check: the range service failing', () => {
  it('answers 503 when the range service fails or answers too much; a password not listed is not breached', async () => {
    mode = 'ok';
    expect(await checkBreach(ctx, { password: 'not listed' })).toMatchObject({ breached: false, count: 0 });
    mode = 'error';
    await expect(checkBreach(ctx, { password: 'x' })).rejects.toMatchObject({ status: 503 });
    mode = 'huge';
    await expect(checkBreach(ctx, { password: 'x' })).rejects.toMatchObject({ status: 503 });
    mode = 'ok';
  });
});

describe('outbound guard', () => {
  it('refuses metadata addresses, other schemes and names that do not resolve', async () => {
    const opts = { timeoutMs: 2000, maxBytes: 10 };
    await expect(guardedGet('http://169.254.169.254/latest/meta-data', {}, opts)).rejects.toThrow(/destination not allowed/);
    await expect(guardedGet('ftp://example.test/', {}, opts)).rejects.toBeInstanceOf(OutboundFailed);
    await expect(guardedGet('http://no-such-host.invalid/', {}, opts)).rejects.toThrow(/does not resolve/);
  });
});

describe('LDIF (RFC 2849)', () => {
  it('writes SAFE-STRINGs plainly, everything else in base64, and folds long lines', () => {
    const long = 'x'.repeat(200);
    const text = writeLdif([
      { dn: 'cn=a,dc=x', attributes: { cn: ['a', 'trailing ', ':colon', '<lt'], jpegPhoto: [Buffer.from([0, 1, 2])], description: [long] } },
    ]);
    expect(text).toContain('cn: a\n');
    expect(text).toContain(`cn:: ${Buffer.from('trailing ').toString('base64')}`);
    expect(text).toContain(`cn:: ${Buffer.from(':colon').toString('base64')}`);
    expect(text).toContain(`cn:: ${Buffer.from('<lt').toString('base64')}`);
    expect(text).toContain('jpegPhoto:: AAEC');
    for (const line of text.split('\n')) expect(line.length).toBeLessThanOrEqual(76);
    const [rec] = parseLdif(text, 10) as unknown as [{ attributes: Record<string, unknown[]> }];
    expect(rec.attributes.description).toEqual([long]);
    expect(rec.attributes.cn).toEqual(['a', 'trailing ', ':colon', '<lt']);
    expect(Buffer.isBuffer(rec.attributes.jpegPhoto![0]) || rec.attributes.jpegPhoto![0] === '\u0000\u0001\u0002').toBe(true);
    const binary = parseLdif(`dn: cn=b\nphoto:: ${Buffer.from([0xff, 0xfe]).toString('base64')}\n`, 10) as unknown as [
      { attributes: Record<string, unknown[]> },
    ];
    expect(Buffer.isBuffer(binary[0].attributes.photo![0])).toBe(true);
  });

  it('refuses malformed records with their line', () => {
    const bad: [string, RegExp][] = [
      ['dn: cn=x\ncn: x\n-\n', /belongs to modify/],
      ['dn: cn=x\nchangetype: modify\n-\n', /without a modification/],
      ['dn: cn=x\nchangetype: modify\nfrob: cn\n-\n', /expected "add:"/],
      ['dn: cn=x\nchangetype: modify\nreplace: cn\nsn: y\n-\n', /expected a value of cn/],
      ['dn: cn=x\nchangetype: modify\n', /at least one modification/],
      ['dn: cn=x\nchangetype: delete\ncn: x\n', /has no attributes/],
      ['dn: cn=x\n', /has no attributes/],
      ['dn: cn=x\ncn:: ***\n', /invalid base64/],
      ['dn: cn=x\n1bad: y\n', /not an attribute description/],
      ['dn: cn=x\ncn: x\n\ndn: cn=y\ncn: y\n\ndn: cn=z\ncn: z\n', /more than 2 records/],
    ];
    for (const [text, message] of bad) expect(() => parseLdif(text, 2), text).toThrow(message);
    expect(parseLdif('version: 1\n', 2)).toEqual([]);
    expect(parseLdif('\n\n# c\n', 2)).toEqual([]);
    expect(parseLdif('version: 1\ndn: cn=x\ncn: x\n', 2)).toHaveLength(1);
  });
});

describe('jobs worker', () => {
  it('a message of an unknown job is done; an unreadable one is reported for redelivery', async () => {
    const out = await jobsWorker({
      Records: [
        { messageId: 'm1', body: JSON.stringify({ tenant_id: ctx.principal.tenantId, job_id: '00000000-0000-7000-8000-000000000000' }) },
        { messageId: 'm2', body: '{not json' },
      ],
    } as never);
    expect(out.batchItemFailures).toEqual([{ itemIdentifier: 'm2' }]);
  });
});

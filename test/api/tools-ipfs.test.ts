import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { FsBlockstore } from 'blockstore-fs';
import { exporter } from 'ipfs-unixfs-exporter';
import { CID } from 'multiformats/cid';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { api, canary, errorCode, newAccount, type TestAccount } from '../helpers/api.js';
import { findLeaks } from '../helpers/leaks.js';

/**
 * POST /api/v1/ipfs/store and /fetch (lib/tools/ipfs.ts) on the runtime's filesystem
 * blockstore (scripts/local/tools.ts). The CID is recomputed over the stored (encrypted)
 * bytes by an independent UnixFS implementation: ipfs-only-hash, which runs
 * ipfs-unixfs-importer 7 (the service uses 17) with Kubo's CIDv1 settings.
 */
const onlyHash = createRequire(import.meta.url)('ipfs-only-hash') as { of(content: Uint8Array, options: Record<string, unknown>): Promise<string> };
let acct: TestAccount;
let other: TestAccount;
let writer: string;
let reader: string;
const blockstore = () => new FsBlockstore(join(inject('dataDir'), 'ipfs'));
const secretText = canary('ipfs-content');

async function storedBytes(cid: string): Promise<Buffer> {
  const fs = blockstore();
  await fs.open();
  const entry = (await exporter(CID.parse(cid), fs)) as unknown as { content(): AsyncIterable<Uint8Array> };
  const chunks: Uint8Array[] = [];
  for await (const c of entry.content()) chunks.push(c);
  return Buffer.concat(chunks);
}

const store = (body: unknown, k = writer) => api('POST', '/api/v1/ipfs/store', { key: k, body });
const fetchCid = (body: unknown, k = reader) => api('POST', '/api/v1/ipfs/fetch', { key: k, body });

beforeAll(async () => {
  [acct, other] = await Promise.all([newAccount('ipfs'), newAccount('ipfs-other')]);
  writer = await acct.key(['secrets:write']);
  reader = await acct.key(['secrets:read']);
});

describe('POST /api/v1/ipfs/store and /fetch', () => {
  it('a small text: one raw block whose CID an independent implementation computes the same; fetch round-trips', async () => {
    const res = await store({ content: `hello ${secretText}` });
    expect(res.status, res.text).toBe(200);
    const { cid, encryption } = res.body.data;
    expect(encryption).toBe('account-key');
    expect(cid).toMatch(/^bafkrei/); // CIDv1, raw codec: a single raw leaf
    const bytes = await storedBytes(cid);
    expect(bytes.includes(Buffer.from(secretText))).toBe(false);
    expect(await onlyHash.of(bytes, { cidVersion: 1, rawLeaves: true })).toBe(cid);
    const back = await fetchCid({ cid });
    expect(back.status, back.text).toBe(200);
    expect(back.body.data).toMatchObject({ cid, content: `hello ${secretText}` });
  });

  it('500 KB of binary content: a balanced DAG of 256 KiB raw leaves, the same CID independently; fetch round-trips', async () => {
    const content = randomBytes(500 * 1024);
    const res = await store({ content_base64: content.toString('base64') });
    expect(res.status, res.text).toBe(200);
    const { cid } = res.body.data;
    expect(cid).toMatch(/^bafybei/); // dag-pb root over the leaves
    const bytes = await storedBytes(cid);
    expect(bytes.length).toBe(res.body.data.size);
    expect(await onlyHash.of(bytes, { cidVersion: 1, rawLeaves: true })).toBe(cid);
    const back = await fetchCid({ cid });
    expect(back.status, back.text).toBe(200);
    expect(Buffer.from(back.body.data.content_base64, 'base64').equals(content)).toBe(true);
  });

  it('a tampered block is refused', async () => {
    const res = await store({ content: canary('ipfs-tamper') });
    const { cid } = res.body.data;
    const fs = blockstore();
    await fs.open();
    const bytes = await storedBytes(cid);
    bytes[bytes.length - 1]! ^= 1;
    await fs.put(CID.parse(cid), bytes);
    const back = await fetchCid({ cid });
    expect(back.status, back.text).toBe(502);
    expect(errorCode(back)).toBe('content_integrity_failed');
    // a leaf of a multi-block file as well
    const big = await store({ content_base64: randomBytes(300 * 1024).toString('base64') });
    const root = await exporter(CID.parse(big.body.data.cid), fs);
    const leaf = (root as unknown as { node: { Links: { Hash: CID }[] } }).node.Links[1]!.Hash;
    await fs.put(leaf, randomBytes(10));
    const bad = await fetchCid({ cid: big.body.data.cid });
    expect(bad.status).toBe(502);
  });

  it('with a key the caller keeps: fetch needs that key', async () => {
    const key = randomBytes(32).toString('base64');
    const res = await store({ content: 'kept by the caller', key });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.encryption).toBe('caller-key');
    const { cid } = res.body.data;
    expect((await fetchCid({ cid })).status).toBe(400);
    expect((await fetchCid({ cid, key: randomBytes(32).toString('base64') })).status).toBe(404);
    const back = await fetchCid({ cid, key });
    expect(back.body.data.content).toBe('kept by the caller');
    // another account, even with the key: 404
    expect((await fetchCid({ cid, key }, await other.key(['secrets:read']))).status).toBe(404);
  });

  it('401, 403, cross-account 404, 400', async () => {
    const made = await store({ content: 'x' });
    const { cid } = made.body.data;
    expect((await store({ content: 'x' }, 'scm_bad')).status).toBe(401);
    expect((await fetchCid({ cid }, 'scm_bad')).status).toBe(401);
    expect((await store({ content: 'x' }, reader)).status).toBe(403);
    expect((await fetchCid({ cid }, writer)).status).toBe(403);
    expect((await fetchCid({ cid }, await other.key(['secrets:read']))).status).toBe(404);
    // a CID nobody stored
    expect((await fetchCid({ cid: 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy' })).status).toBe(404);
    for (const body of [{}, { content: 'a', content_base64: 'YQ==' }, { content: 'a', key: 'short' }]) {
      const res = await store(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const badCid = await fetchCid({ cid: 'not-a-cid-at-all' });
    expect(badCid.status).toBe(400);
    expect(errorCode(badCid)).toBe('bad_request');
  });

  it('no stored or fetched content reaches the table or the log', async () => {
    await new Promise((r) => setTimeout(r, 200));
    const leaks = await findLeaks({
      dynamoEndpoint: inject('dynamoEndpoint'),
      tableName: inject('tableName'),
      logText: readFileSync(inject('logFile'), 'utf8'),
      extra: [secretText],
    });
    expect(leaks).toEqual([]);
  });
});

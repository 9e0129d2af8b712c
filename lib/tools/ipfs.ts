import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { FsBlockstore } from 'blockstore-fs';
import { exporter } from 'ipfs-unixfs-exporter';
import { importBytes } from 'ipfs-unixfs-importer';
import { CID } from 'multiformats/cid';
import * as z from 'zod/v4';
import type { CallContext } from '../auth/principal.js';
import { recordAudit } from '../audit/audit.js';
import { config } from '../config.js';
import { open, seal, type SealScope } from '../crypto/envelope.js';
import { badRequest, HttpError, notFound, serviceUnavailable } from '../core/errors.js';
import { OutboundFailed } from '../events/outbound.js';
import { outboundTimeoutMs } from '../events/timeouts.js';
import { exactlyOneOf } from '../schemas.js';
import { checkedUrl } from './outbound.js';

/**
 * Encrypted content on IPFS. `store` encrypts before anything leaves the service — with the
 * account's envelope key (AES-256-GCM, AAD binding the account) or with a 256-bit key the
 * caller keeps (never stored) — and adds the ciphertext as a UnixFS file with the importer
 * settings Kubo uses for CIDv1 (`ipfs add --cid-version=1`: raw leaves, 256 KiB fixed-size
 * chunks, balanced DAG of 174 links), so the CID is the one any IPFS node computes for those
 * bytes. Blocks go to the operator's Kubo node (IPFS_API_URL, the Kubo RPC API; pinned) or,
 * in the embedded runtime, to a filesystem blockstore (IPFS_BLOCKSTORE_DIR). `fetch` reads
 * the blocks back, checks each against the hash in its CID (a tampered block is refused),
 * reassembles and decrypts.
 *
 * Stored form: mode(1) | payload. Mode 1: the envelope's sealed form (lib/crypto/envelope.ts)
 * for scope (account, `ipfs_object`, `content`, 1). Mode 2: iv(12) | tag(16) | ciphertext
 * under the caller's key, AAD `ipfs:<account id>`.
 */
const MODE_ENVELOPE = 1;
const MODE_CALLER_KEY = 2;
const MAX_CONTENT = 512 * 1024;
/** Kubo's CIDv1 defaults (and the importer's): raw leaves, size-262144 chunker, balanced layout, 174 children. */
const KUBO_V1 = { cidVersion: 1, rawLeaves: true, reduceSingleLeafToSelf: true } as const;

const Key = z
  .string()
  .regex(/^[A-Za-z0-9+/]{43}=$/, 'a 256-bit key in base64 (44 characters)')
  .optional();

export const StoreBody = exactlyOneOf(
  z.strictObject({
    content: z.string().min(1).max(MAX_CONTENT).optional(),
    content_base64: z
      .string()
      .min(4)
      .max(Math.ceil(MAX_CONTENT / 3) * 4)
      .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'base64')
      .optional(),
    key: Key,
  }),
  ['content', 'content_base64'],
  'send either content or content_base64',
);
type StoreBody = z.infer<typeof StoreBody>;

export const FetchBody = z.strictObject({ cid: z.string().min(8).max(512), key: Key });
type FetchBody = z.infer<typeof FetchBody>;

const scope = (tenantId: string): SealScope => ({ tenantId, type: 'ipfs_object', id: 'content', version: 1 });
const callerAad = (tenantId: string) => Buffer.from(`ipfs:${tenantId}`);

async function encrypt(tenantId: string, plaintext: Buffer, key: string | undefined): Promise<Buffer> {
  if (!key) return Buffer.concat([Buffer.from([MODE_ENVELOPE]), await seal(scope(tenantId), plaintext)]);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', Buffer.from(key, 'base64'), iv);
  cipher.setAAD(callerAad(tenantId));
  const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([Buffer.from([MODE_CALLER_KEY]), iv, cipher.getAuthTag(), ct]);
}

/** The plaintext, or undefined when this account (and key) cannot open it: the same 404 as a missing CID. */
async function decrypt(tenantId: string, stored: Buffer, key: string | undefined): Promise<Buffer | undefined> {
  try {
    if (stored[0] === MODE_ENVELOPE) return await open(scope(tenantId), stored.subarray(1));
    if (stored[0] === MODE_CALLER_KEY) {
      if (!key) throw badRequest('this content was stored with a key of your own: send it as key');
      const decipher = createDecipheriv('aes-256-gcm', Buffer.from(key, 'base64'), stored.subarray(1, 13));
      decipher.setAAD(callerAad(tenantId));
      decipher.setAuthTag(stored.subarray(13, 29));
      return Buffer.concat([decipher.update(stored.subarray(29)), decipher.final()]);
    }
    return undefined;
  } catch (error) {
    if (error instanceof HttpError) throw error;
    return undefined;
  }
}

interface Blocks {
  put(cid: CID, bytes: Uint8Array): Promise<CID>;
  get(cid: CID): AsyncGenerator<Uint8Array>;
  /** After an import: pin the root (Kubo). */
  pin(cid: CID): Promise<void>;
}

class IntegrityError extends Error {}

/**
 * The node's URL is the operator's (IPFS_API_URL), never an account's: it is checked by the
 * tools' guard once per request, here, before any content leaves; the Kubo client then
 * connects by name without a per-connection check (docs/operations.md, "Operator-set
 * destinations": no tenant controls the name or its DNS).
 */
async function blocks(): Promise<Blocks> {
  const cfg = config();
  if (cfg.IPFS_API_URL) {
    const url = await checkedUrl(cfg.IPFS_API_URL);
    const { create } = await import('kubo-rpc-client');
    const kubo = create({ url });
    return {
      async put(cid, bytes) {
        // Kubo's block/put: `cid-codec` (raw or dag-pb) and `mhtype` (the client kebab-cases option names)
        const put = await kubo.block.put(bytes, { cidCodec: cid.code === 0x55 ? 'raw' : 'dag-pb', mhtype: 'sha2-256' } as never);
        if (!put.equals(cid)) throw new IntegrityError(`the IPFS node stored block ${cid} as ${put}`);
        return cid;
      },
      async *get(cid) {
        yield await kubo.block.get(cid, { timeout: outboundTimeoutMs('ipfs') });
      },
      async pin(cid) {
        await kubo.pin.add(cid, { recursive: true });
      },
    };
  }
  if (!cfg.IPFS_BLOCKSTORE_DIR) throw serviceUnavailable('IPFS storage is not configured (IPFS_API_URL)');
  const fs = new FsBlockstore(cfg.IPFS_BLOCKSTORE_DIR);
  await fs.open();
  return { put: (cid, bytes) => fs.put(cid, bytes), get: (cid) => fs.get(cid), pin: async () => undefined };
}

/** A read-only view that refuses any block whose bytes do not hash to its CID. */
function verified(inner: Blocks) {
  return {
    async *get(cid: CID): AsyncGenerator<Uint8Array> {
      const chunks: Uint8Array[] = [];
      for await (const c of inner.get(cid)) chunks.push(c);
      const bytes = Buffer.concat(chunks);
      if (cid.multihash.code !== 0x12) throw new IntegrityError(`block ${cid} is not hashed with sha2-256`);
      if (!createHash('sha256').update(bytes).digest().equals(Buffer.from(cid.multihash.digest))) {
        throw new IntegrityError(`block ${cid} does not match its hash`);
      }
      yield bytes;
    },
  };
}

const integrity = () =>
  new HttpError(502, 'content_integrity_failed', 'the content read from IPFS does not match its CID: refused', { expose: true });
const unavailable = (error: unknown) =>
  serviceUnavailable(`the IPFS node is unavailable${error instanceof OutboundFailed ? `: ${error.message}` : ''}`, error);

export async function storeContent(ctx: CallContext, body: StoreBody) {
  const plaintext = body.content !== undefined ? Buffer.from(body.content, 'utf8') : Buffer.from(body.content_base64!, 'base64');
  if (plaintext.length > MAX_CONTENT) throw badRequest(`content is larger than ${MAX_CONTENT} bytes`);
  const tenantId = ctx.principal.tenantId;
  const stored = await encrypt(tenantId, plaintext, body.key);
  const store = await blocks().catch((error: unknown) => {
    throw error instanceof HttpError ? error : unavailable(error);
  });
  let cid: CID;
  try {
    ({ cid } = await importBytes(stored, { put: (c: CID, b: Uint8Array) => store.put(c, b) } as never, KUBO_V1));
    await store.pin(cid);
  } catch (error) {
    if (error instanceof IntegrityError) throw integrity();
    throw unavailable(error);
  }
  await recordAudit(ctx, tenantId, { action: 'ipfs.store', resource: { type: 'ipfs_object', id: cid.toString() }, detail: { bytes: stored.length } });
  return { cid: cid.toString(), size: stored.length, encryption: body.key ? 'caller-key' : 'account-key' };
}

export async function fetchContent(ctx: CallContext, body: FetchBody) {
  let cid: CID;
  try {
    cid = CID.parse(body.cid);
  } catch {
    throw badRequest('cid is not a CID (CIDv0 Qm… or CIDv1 multibase)', [{ path: 'cid', message: 'not a CID' }]);
  }
  const store = await blocks().catch((error: unknown) => {
    throw error instanceof HttpError ? error : unavailable(error);
  });
  const chunks: Uint8Array[] = [];
  try {
    const entry = await exporter(cid, verified(store) as never);
    if (entry.type !== 'file' && entry.type !== 'raw') throw notFound('IPFS content');
    for await (const c of entry.content()) chunks.push(c as Uint8Array);
  } catch (error) {
    if (error instanceof HttpError) throw error;
    if (error instanceof IntegrityError) throw integrity();
    // the filesystem blockstore's NotFoundError; Kubo's "block not found" / "not found" answers
    if ((error as Error).name === 'NotFoundError' || /not found/i.test((error as Error).message)) throw notFound('IPFS content');
    throw unavailable(error);
  }
  const plaintext = await decrypt(ctx.principal.tenantId, Buffer.concat(chunks), body.key);
  if (!plaintext) throw notFound('IPFS content');
  const text = plaintext.toString('utf8');
  const isText = Buffer.from(text, 'utf8').equals(plaintext);
  return { cid: cid.toString(), size: plaintext.length, ...(isText ? { content: text } : { content_base64: plaintext.toString('base64') }) };
}

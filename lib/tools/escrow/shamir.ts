import { createHash, timingSafeEqual } from 'node:crypto';
import { combine, split } from 'shamir-secret-sharing';
import { badRequest } from '../../core/errors.js';

/**
 * Shamir m-of-n escrow over `shamir-secret-sharing` (Privy's audited implementation: GF(2^8),
 * each share = the y bytes + its x coordinate). The library combines any shares it is given
 * and returns bytes whatever they are, so this module frames them:
 *
 *     escrow1.<split id: 16 hex>.<threshold>.<share: base64url>
 *
 * and splits `secret ‖ SHA-256(secret)[0..16]`. Combining checks that every share is well
 * formed, of one split, distinct, at least `threshold` of them, and that the result carries
 * its digest — so too few shares, a share of another split or an altered share is a clear
 * 400 (`shares_invalid`), never a wrong secret.
 */
const PREFIX = 'escrow1';
const CHECK = 16;
const SHARE_RE = /^escrow1\.([0-9a-f]{16})\.(\d{1,3})\.([A-Za-z0-9_-]+)$/;

const digest = (b: Uint8Array) => createHash('sha256').update(b).digest().subarray(0, CHECK);

interface SplitResult {
  readonly split_id: string;
  readonly threshold: number;
  readonly shares: string[];
}

export async function splitSecret(secret: Uint8Array, shares: number, threshold: number, splitId: string): Promise<SplitResult> {
  const framed = Buffer.concat([secret, digest(secret)]);
  // the library wants plain Uint8Arrays (not Buffers)
  const parts = await split(new Uint8Array(framed), shares, threshold);
  return { split_id: splitId, threshold, shares: parts.map((p) => `${PREFIX}.${splitId}.${threshold}.${Buffer.from(p).toString('base64url')}`) };
}

const invalid = (message: string, path = 'body.shares') => badRequest(message, [{ path, message }], 'shares_invalid');

/** The secret of `shares` (strings as splitSecret returned them), or a 400 saying what is wrong. */
export async function combineShares(shares: readonly string[]): Promise<{ secret: Buffer; split_id: string; threshold: number }> {
  const parsed = shares.map((s, i) => {
    const m = SHARE_RE.exec(s.trim());
    const bytes = m ? Buffer.from(m[3]!, 'base64url') : undefined;
    if (!m || !bytes || bytes.length < CHECK + 2)
      throw invalid(`share ${i + 1} is not an escrow share (escrow1.<split id>.<threshold>.<data>)`, `body.shares.${i}`);
    return { splitId: m[1]!, threshold: Number(m[2]), bytes };
  });
  const first = parsed[0]!;
  if (parsed.some((p) => p.splitId !== first.splitId || p.threshold !== first.threshold)) {
    throw invalid('the shares come from different splits: send shares of one split only');
  }
  if (parsed.some((p) => p.bytes.length !== first.bytes.length)) throw invalid('the shares differ in length: one was altered');
  const xs = new Set(parsed.map((p) => p.bytes[p.bytes.length - 1]));
  if (xs.size !== parsed.length) throw invalid('the same share was sent twice');
  if (parsed.length < first.threshold) {
    throw invalid(`this split needs ${first.threshold} shares; ${parsed.length} ${parsed.length === 1 ? 'was' : 'were'} given`);
  }
  const framed = Buffer.from(await combine(parsed.map((p) => new Uint8Array(p.bytes))));
  const secret = framed.subarray(0, framed.length - CHECK);
  if (!timingSafeEqual(digest(secret), framed.subarray(framed.length - CHECK))) {
    throw invalid('the shares do not combine to the split secret: one of them was altered');
  }
  return { secret, split_id: first.splitId, threshold: first.threshold };
}

import { createPublicKey, verify } from 'node:crypto';
import { digestMessage, GENESIS, headMessage, linkHash, type ChainLink } from './canonical.js';

/**
 * Verifies an audit export in JSON Lines (GET /api/v1/audit/logs/export?format=jsonl):
 * every line but the last is an entry with `chain: {seq, prev, hash}`; the last line is
 * `{"digest": {...}, "signature": "<base64url Ed25519>"}`.
 *
 * 1. entries are in chain order: seq = digest.first_seq, first_seq + 1, ... with no gap;
 * 2. each entry's prev is the previous entry's hash (the first one's is digest.prev_hash);
 * 3. each hash is recomputed from the entry without `chain` (lib/audit/canonical.ts);
 * 4. the last hash and the count equal the digest's;
 * 5. the digest's signature verifies with the account's audit public key: pass the key
 *    you pinned (from an earlier export) — without one, the key in the digest is used,
 *    which proves integrity of the file but not who made it;
 * 6. when the digest's head is the last entry, the head's signature verifies too.
 *
 * Pure and dependency-free apart from Node.js, so customers can run it as is
 * (scripts/audit-verify.ts wraps it for the command line).
 */
interface VerifyResult {
  readonly ok: boolean;
  readonly count: number;
  readonly first_seq: number | null;
  readonly last_seq: number | null;
  readonly problems: string[];
}

export interface JwkOkp {
  readonly kty: string;
  readonly crv: string;
  readonly x: string;
}

const verifySig = (jwk: JwkOkp, message: string, signature: string): boolean => {
  try {
    const key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: 'jwk' });
    return verify(null, Buffer.from(message, 'utf8'), key, Buffer.from(signature, 'base64url'));
  } catch {
    return false;
  }
};

/** Checks a sequence of chained entries, in order, starting after `prevHash`. */
export function verifyChain(entries: readonly Record<string, unknown>[], prevHash: string, firstSeq: number | null): string[] {
  const problems: string[] = [];
  let prev = prevHash;
  let expectSeq = firstSeq;
  for (const [i, e] of entries.entries()) {
    const { chain, ...entry } = e as { chain?: ChainLink } & Record<string, unknown>;
    const id = typeof entry.id === 'string' ? entry.id : `#${i + 1}`;
    if (!chain || typeof chain.seq !== 'number' || typeof chain.hash !== 'string' || typeof chain.prev !== 'string') {
      problems.push(`entry ${id}: no chain link`);
      continue;
    }
    if (expectSeq !== null && chain.seq !== expectSeq)
      problems.push(`entry ${id}: seq ${chain.seq} where ${expectSeq} was expected (an entry is missing or out of order)`);
    if (chain.prev !== prev) problems.push(`entry ${id} (seq ${chain.seq}): prev does not match the previous entry's hash`);
    if (linkHash(chain.seq, chain.prev, entry) !== chain.hash)
      problems.push(`entry ${id} (seq ${chain.seq}): content does not match its hash (modified)`);
    prev = chain.hash;
    expectSeq = chain.seq + 1;
  }
  return problems;
}

export function verifyExport(text: string, opts: { publicKey?: JwkOkp } = {}): VerifyResult {
  const lines = text.split('\n').filter((l) => l.trim().length > 0);
  const fail = (problem: string): VerifyResult => ({ ok: false, count: 0, first_seq: null, last_seq: null, problems: [problem] });
  if (lines.length === 0) return fail('empty export');
  let parsed: Record<string, unknown>[];
  try {
    parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  } catch {
    return fail('a line is not JSON');
  }
  const trailer = parsed.pop()!;
  const digest = trailer.digest as Record<string, unknown> | undefined;
  const signature = trailer.signature;
  if (!digest || typeof signature !== 'string') return fail('the last line is not a digest');
  const firstSeq = (digest.first_seq as number | null) ?? null;
  const problems = verifyChain(parsed, (digest.prev_hash as string | undefined) ?? GENESIS, firstSeq);
  const last = parsed.at(-1)?.chain as ChainLink | undefined;
  if (parsed.length !== digest.count) problems.push(`digest counts ${String(digest.count)} entries, the file has ${parsed.length}`);
  if ((last?.hash ?? null) !== (digest.last_hash ?? null)) problems.push('the last entry does not match the digest');
  if ((last?.seq ?? null) !== (digest.last_seq ?? null)) problems.push('the last seq does not match the digest');
  const jwk = opts.publicKey ?? (digest.public_key as JwkOkp | undefined);
  if (!jwk) problems.push('no public key to verify the digest with');
  else {
    if (!verifySig(jwk, digestMessage(digest), signature)) problems.push('the digest signature does not verify');
    const head = digest.head as { seq?: number; hash?: string; signature?: string } | undefined;
    if (head && last && head.seq === last.seq) {
      if (head.hash !== last.hash) problems.push('the chain head does not match the last entry');
      else if (!verifySig(jwk, headMessage(digest.tenant_id as string, head.seq, head.hash), head.signature ?? ''))
        problems.push('the chain head signature does not verify');
    }
  }
  return { ok: problems.length === 0, count: parsed.length, first_seq: firstSeq, last_seq: last?.seq ?? null, problems };
}

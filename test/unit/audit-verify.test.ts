import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { digestMessage, GENESIS, headMessage, linkHash } from '../../lib/audit/canonical.js';
import { verifyChain, verifyExport } from '../../lib/audit/verify.js';

/**
 * lib/audit/verify.ts (what a customer runs on an export): a chain built here with the
 * canonical hashing and a key made here verifies; each kind of damage is named.
 */
const keys = generateKeyPairSync('ed25519');
const jwk = keys.publicKey.export({ format: 'jwk' }) as { kty: 'OKP'; crv: 'Ed25519'; x: string };
const sig = (message: string) => sign(null, Buffer.from(message), keys.privateKey).toString('base64url');

function chain(n: number, firstSeq = 1, prev = GENESIS) {
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < n; i++) {
    const entry = { id: `id-${i}`, action: 'secret.create', outcome: 'success' };
    const seq = firstSeq + i;
    const hash = linkHash(seq, prev, entry);
    out.push({ ...entry, chain: { seq, prev, hash } });
    prev = hash;
  }
  return out;
}
function exportOf(entries: Record<string, unknown>[], change: (d: Record<string, unknown>) => void = () => {}, opts: { withHead?: boolean; badHead?: boolean } = {}) {
  const first = entries[0]?.chain as { seq: number; prev: string } | undefined;
  const last = entries.at(-1)?.chain as { seq: number; hash: string } | undefined;
  const digest: Record<string, unknown> = {
    version: 1,
    tenant_id: 't-1',
    count: entries.length,
    first_seq: first?.seq ?? null,
    last_seq: last?.seq ?? null,
    prev_hash: first?.prev ?? GENESIS,
    last_hash: last?.hash ?? null,
    head: opts.withHead && last ? { seq: last.seq, hash: last.hash, signature: opts.badHead ? sig('other') : sig(headMessage('t-1', last.seq, last.hash)) } : null,
    public_key: jwk,
  };
  change(digest);
  return [...entries, { digest, signature: sig(digestMessage(digest)) }].map((l) => JSON.stringify(l)).join('\n') + '\n';
}

describe('verifying an export', () => {
  it('an intact export verifies, with and without the signed chain head; an empty range too', () => {
    expect(verifyExport(exportOf(chain(3)))).toEqual({ ok: true, count: 3, first_seq: 1, last_seq: 3, problems: [] });
    expect(verifyExport(exportOf(chain(2, 7, 'f'.repeat(64)), undefined, { withHead: true }))).toEqual({ ok: true, count: 2, first_seq: 7, last_seq: 8, problems: [] });
    expect(verifyExport(exportOf([]))).toEqual({ ok: true, count: 0, first_seq: null, last_seq: null, problems: [] });
    // the key may be given instead of trusting the one in the file
    expect(verifyExport(exportOf(chain(1)), { publicKey: jwk }).ok).toBe(true);
  });

  it('the file itself: empty, a line that is not JSON, no digest line', () => {
    const fail = (problem: string) => ({ ok: false, count: 0, first_seq: null, last_seq: null, problems: [problem] });
    expect(verifyExport('')).toEqual(fail('empty export'));
    expect(verifyExport('\n  \n')).toEqual(fail('empty export'));
    expect(verifyExport('{"a":1}\nnot json\n')).toEqual(fail('a line is not JSON'));
    expect(verifyExport('{"a":1}\n')).toEqual(fail('the last line is not a digest'));
    expect(verifyExport('{"digest":{},"signature":7}\n')).toEqual(fail('the last line is not a digest'));
  });

  it('damage is named: a modified, missing or reordered entry, a count, last entry or seq that differs, a bad signature', () => {
    const entries = chain(3);
    const modified = entries.map((e, i) => (i === 1 ? { ...e, action: 'secret.delete' } : e));
    expect(verifyExport(exportOf(entries).replace('"id":"id-1","action":"secret.create"', '"id":"id-1","action":"secret.delete"')).problems).toEqual([
      'entry id-1 (seq 2): content does not match its hash (modified)',
    ]);
    expect(verifyExport(exportOf(modified)).problems).toContain('entry id-1 (seq 2): content does not match its hash (modified)');
    const gap = verifyExport(exportOf([entries[0]!, entries[2]!])).problems;
    expect(gap).toEqual(['entry id-2: seq 3 where 2 was expected (an entry is missing or out of order)', "entry id-2 (seq 3): prev does not match the previous entry's hash"]);
    expect(verifyExport(exportOf(entries, (d) => (d.count = 4))).problems).toEqual(['digest counts 4 entries, the file has 3']);
    expect(verifyExport(exportOf(entries, (d) => (d.last_hash = 'x'))).problems).toEqual(['the last entry does not match the digest']);
    expect(verifyExport(exportOf(entries, (d) => (d.last_seq = 9))).problems).toEqual(['the last seq does not match the digest']);
    const other = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }) as typeof jwk;
    expect(verifyExport(exportOf(entries), { publicKey: other }).problems).toEqual(['the digest signature does not verify']);
    expect(verifyExport(exportOf(entries, (d) => delete d.public_key)).problems).toEqual(['no public key to verify the digest with']);
    expect(verifyExport(exportOf(entries, (d) => (d.public_key = { kty: 'OKP', crv: 'Ed25519', x: 'AAAA' }))).problems).toEqual(['the digest signature does not verify']);
  });

  it('the chain head: must be the last entry, and signed', () => {
    const entries = chain(2);
    expect(verifyExport(exportOf(entries, undefined, { withHead: true, badHead: true })).problems).toEqual(['the chain head signature does not verify']);
    const wrongHead = exportOf(entries, (d) => (d.head = { seq: 2, hash: 'x', signature: '' }));
    expect(verifyExport(wrongHead).problems).toEqual(['the chain head does not match the last entry']);
    // a head further on (entries after the range) is not compared
    expect(verifyExport(exportOf(entries, (d) => (d.head = { seq: 9, hash: 'x' }))).ok).toBe(true);
  });

  it('verifyChain: entries without a link are named by id, or by position when they have none', () => {
    expect(verifyChain([{ id: 'a' }, { x: 1 }, { id: 'c', chain: { seq: '1', prev: GENESIS, hash: 'h' } }], GENESIS, null)).toEqual([
      'entry a: no chain link',
      'entry #2: no chain link',
      'entry c: no chain link',
    ]);
    // no expected first seq: any start is accepted
    expect(verifyChain(chain(2, 40), GENESIS, null)).toEqual([]);
  });
});

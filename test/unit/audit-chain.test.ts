import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, digestMessage, GENESIS, linkHash } from '../../lib/audit/canonical.js';
import { verifyExport } from '../../lib/audit/verify.js';
import { EVENT_TYPES } from '../../lib/outbox/catalogue.js';
import { isEventPattern, payloadDoc, subscribed } from '../../lib/events/payloads.js';

describe('canonical JSON', () => {
  it('sorts keys at every level, drops undefined, keeps arrays in order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: null, y: 'x' }], c: true }, u: undefined })).toBe(
      '{"a":{"c":true,"d":[3,{"y":"x","z":null}]},"b":1}',
    );
    expect(canonicalJson({ é: 1, e: 2, E: 3 })).toBe('{"E":3,"e":2,"é":1}');
  });
  it('refuses binary and non-finite values', () => {
    expect(() => canonicalJson({ v: new Uint8Array(1) })).toThrow();
    expect(() => canonicalJson({ v: Number.NaN })).toThrow();
  });
});

/** A small export made the way the service makes it, signed with a fresh key. */
function makeExport(n: number) {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const jwk = publicKey.export({ format: 'jwk' }) as { x: string };
  const entries: Record<string, unknown>[] = [];
  let prev = GENESIS;
  for (let seq = 1; seq <= n; seq++) {
    const entry = {
      id: `0190000${seq}-0000-7000-8000-000000000000`,
      time: new Date(seq * 1000).toISOString(),
      tenant_id: 't',
      actor: { type: 'api_key', id: 'k' },
      action: 'secret.create',
      resource: { type: 'secret', id: `s${seq}` },
      outcome: 'success',
      request_id: 'r',
      source_ip: null,
      user_agent: null,
    };
    const hash = linkHash(seq, prev, entry);
    entries.push({ ...entry, chain: { seq, prev, hash } });
    prev = hash;
  }
  const digest = {
    version: 1,
    tenant_id: 't',
    count: n,
    first_seq: 1,
    last_seq: n,
    prev_hash: GENESIS,
    last_hash: prev,
    public_key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x },
  };
  const signature = sign(null, Buffer.from(digestMessage(digest)), privateKey).toString('base64url');
  return { text: [...entries, { digest, signature }].map((l) => JSON.stringify(l)).join('\n'), jwk: digest.public_key };
}

describe('export verification', () => {
  it('verifies an intact export, with the embedded or a pinned key', () => {
    const x = makeExport(5);
    expect(verifyExport(x.text)).toMatchObject({ ok: true, count: 5, first_seq: 1, last_seq: 5, problems: [] });
    expect(verifyExport(x.text, { publicKey: x.jwk }).ok).toBe(true);
    expect(verifyExport(x.text, { publicKey: makeExport(1).jwk }).problems).toContain('the digest signature does not verify');
  });

  it('detects a modified field, a removed entry, a reordered pair, a rewritten chain and a forged digest', () => {
    const lines = makeExport(5).text.split('\n');
    const edit = (i: number, f: (e: Record<string, any>) => void) => {
      const copy = [...lines];
      const e = JSON.parse(copy[i]!);
      f(e);
      copy[i] = JSON.stringify(e);
      return copy.join('\n');
    };
    expect(verifyExport(edit(2, (e) => (e.resource.id = 'other'))).problems.join()).toMatch(/modified/);
    expect(verifyExport(edit(2, (e) => (e.source_ip = '10.0.0.1'))).ok).toBe(false);
    expect(verifyExport([...lines.slice(0, 2), ...lines.slice(3)].join('\n')).problems.join()).toMatch(/missing|prev/);
    expect(verifyExport([lines[1], lines[0], ...lines.slice(2)].join('\n')).ok).toBe(false);
    // recomputing every hash after an edit still fails: the signed digest holds the last hash
    const rewritten = lines.slice(0, -1).map((l) => JSON.parse(l));
    rewritten[2].action = 'secret.read';
    let prev = GENESIS;
    for (const e of rewritten) {
      const { chain, ...entry } = e;
      e.chain = { seq: chain.seq, prev, hash: linkHash(chain.seq, prev, entry) };
      prev = e.chain.hash;
    }
    expect(verifyExport([...rewritten.map((e) => JSON.stringify(e)), lines.at(-1)].join('\n')).problems.join()).toMatch(/digest/);
    expect(verifyExport(edit(5, (d) => (d.digest.count = 4))).ok).toBe(false);
    expect(verifyExport('').ok).toBe(false);
    expect(verifyExport('{"a":1}').ok).toBe(false);
  });
});

describe('event catalogue', () => {
  it('documents a payload for every event type', () => {
    const undocumented = EVENT_TYPES.filter((t) => !payloadDoc(t));
    expect(undocumented).toEqual([]);
  });
  it('matches subscriptions by type, family and *', () => {
    expect(subscribed(['secret.*'], 'secret.created')).toBe(true);
    expect(subscribed(['secret.*'], 'secrets.created')).toBe(false);
    expect(subscribed(['api_key.created'], 'api_key.revoked')).toBe(false);
    expect(subscribed(['*'], 'tenant.created')).toBe(true);
    expect(isEventPattern('secret.*')).toBe(true);
    expect(isEventPattern('nope.*')).toBe(false);
    expect(isEventPattern('secret.created')).toBe(true);
    expect(isEventPattern('secret.exploded')).toBe(false);
  });
});

describe('retry backoff', () => {
  it('doubles per attempt from the base, caps, and jitters within the upper half', async () => {
    process.env.WEBHOOK_RETRY_BASE_MS ??= '1000';
    const { backoffMs } = await import('../../lib/events/delivery.js');
    expect(backoffMs(1, 1000, 60_000, () => 0)).toBe(500);
    expect(backoffMs(1, 1000, 60_000, () => 1)).toBe(1000);
    expect(backoffMs(4, 1000, 60_000, () => 1)).toBe(8000);
    expect(backoffMs(20, 1000, 60_000, () => 1)).toBe(60_000);
    expect(backoffMs(20, 1000, 60_000, () => 0)).toBe(30_000);
  });
});

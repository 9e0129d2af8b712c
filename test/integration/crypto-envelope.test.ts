import { randomBytes, randomUUID } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { conditionFailed, intercept } from './dynamo-faults.js';
import { table } from './table.js';
import * as env from '../../lib/crypto/envelope.js';

/**
 * lib/crypto/envelope.ts against the suite's table and local keyring: the sealed layout
 * field by field, every tamper, a value sealed under another data key, data-key cache
 * expiry and eviction, the concurrent first seal, and the JSON helpers.
 */
let t: Awaited<ReturnType<typeof table>>;
const undo: (() => void)[] = [];

beforeAll(async () => {
  t = await table();
});
afterEach(() => {
  while (undo.length > 0) undo.pop()!();
  vi.restoreAllMocks();
});

const scopeOf = (tenantId = randomUUID()) => ({ tenantId, type: 'secret', id: randomUUID(), version: 1 });
const dekKey = (tenantId: string) => ({ pk: `T#${tenantId}`, sk: 'DEK#CURRENT' });
const uuidOf = (b: Buffer) => {
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};
/** Counts GetItem reads of tenants' data-key items. */
function countDekReads() {
  const reads: string[] = [];
  undo.push(
    intercept(t.db(), (command, input) => {
      if (command === 'GetItemCommand' && input.Key?.sk === 'DEK#CURRENT') reads.push(input.Key.pk as string);
      return undefined;
    }),
  );
  return reads;
}
async function rejection(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'resolved';
  } catch (error) {
    return (error as Error).message;
  }
}

describe('sealed layout: format(1) | data key id(16) | iv(12) | tag(16) | ciphertext', () => {
  it('each field where the layout says, the ciphertext as long as the plaintext, the id that of the stored data key', async () => {
    const scope = scopeOf();
    const plaintext = 'CANARY-layout-0123456789';
    const sealed = Buffer.from(await env.seal(scope, plaintext));
    expect(sealed.length).toBe(1 + 16 + 12 + 16 + Buffer.byteLength(plaintext));
    expect(sealed[0]).toBe(1);
    const item = await t.get(dekKey(scope.tenantId));
    expect(item).toMatchObject({ provider: 'local', dek_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(uuidOf(sealed.subarray(1, 17))).toBe(item!.dek_id);
    const again = Buffer.from(await env.seal(scope, plaintext));
    // same key id, fresh IV, different tag and ciphertext
    expect(again.subarray(1, 17).equals(sealed.subarray(1, 17))).toBe(true);
    expect(again.subarray(17, 29).equals(sealed.subarray(17, 29))).toBe(false);
    expect(again.subarray(45).equals(sealed.subarray(45))).toBe(false);
    expect((await env.open(scope, sealed)).toString()).toBe(plaintext);
  });

  it('binary plaintext and the empty plaintext round-trip; a Buffer comes back', async () => {
    const scope = scopeOf();
    const bytes = randomBytes(300);
    const opened = await env.open(scope, await env.seal(scope, bytes));
    expect(Buffer.isBuffer(opened)).toBe(true);
    expect(opened.equals(bytes)).toBe(true);
    const empty = await env.seal(scope, '');
    expect(empty.length).toBe(45);
    expect((await env.open(scope, empty)).length).toBe(0);
  });

  it('the wrapped data key in the table is not the key that seals (it is wrapped under the master key)', async () => {
    const scope = scopeOf();
    await env.seal(scope, 'x');
    const item = await t.get(dekKey(scope.tenantId));
    const wrapped = Buffer.from(item!.wrapped as Uint8Array);
    expect(wrapped.length).toBe(1 + 12 + 16 + 32);
    const key = await env.keyProvider().decryptDataKey(wrapped, { tenant_id: scope.tenantId });
    expect(key.length).toBe(32);
    // wrapped under this tenant's encryption context only
    await expect(env.keyProvider().decryptDataKey(wrapped, { tenant_id: randomUUID() })).rejects.toThrow();
  });
});

describe('opening refuses', () => {
  it('a wrong format byte, before any key is loaded', async () => {
    const scope = scopeOf();
    const sealed = Buffer.from(await env.seal(scope, 'value'));
    for (const format of [0, 2, 255]) {
      const copy = Buffer.from(sealed);
      copy[0] = format;
      expect(await rejection(env.open(scope, copy))).toBe('unrecognised sealed value');
    }
    // a tenant without a data key: the format check fails first, no data key is created
    const fresh = scopeOf();
    const copy = Buffer.from(sealed);
    copy[0] = 9;
    expect(await rejection(env.open(fresh, copy))).toBe('unrecognised sealed value');
    expect(await t.get(dekKey(fresh.tenantId))).toBeUndefined();
  });

  it('a value shorter than the header; the bare header of a non-empty value fails authentication', async () => {
    const scope = scopeOf();
    const sealed = Buffer.from(await env.seal(scope, 'value'));
    expect(await rejection(env.open(scope, sealed.subarray(0, 44)))).toBe('unrecognised sealed value');
    expect(await rejection(env.open(scope, Buffer.alloc(0)))).toBe('unrecognised sealed value');
    expect(await rejection(env.open(scope, sealed.subarray(0, 45)))).toMatch(/unable to authenticate/);
    expect(await rejection(env.open(scope, sealed.subarray(0, sealed.length - 1)))).toMatch(/unable to authenticate/);
  });

  it('a value sealed under another data key id', async () => {
    const scope = scopeOf();
    const sealed = Buffer.from(await env.seal(scope, 'value'));
    for (const at of [1, 8, 16]) {
      const copy = Buffer.from(sealed);
      copy[at]! ^= 0x01;
      expect(await rejection(env.open(scope, copy))).toBe('sealed with an unknown data key');
    }
  });

  it('any flipped bit of IV, tag or ciphertext', async () => {
    const scope = scopeOf();
    const sealed = Buffer.from(await env.seal(scope, 'a longer value to tamper with'));
    for (const at of [17, 28, 29, 44, 45, sealed.length - 1]) {
      const copy = Buffer.from(sealed);
      copy[at]! ^= 0x80;
      expect(await rejection(env.open(scope, copy))).toMatch(/unable to authenticate/);
    }
  });

  it('another tenant, type, id or version (the additional data), even with the same data key', async () => {
    const scope = { ...scopeOf(), version: 12 };
    const sealed = await env.seal(scope, 'value');
    for (const other of [{ type: 'password' }, { id: randomUUID() }, { version: 1 }, { version: 2 }, { version: 121 }, { id: `${scope.id}\u0000` }]) {
      expect(await rejection(env.open({ ...scope, ...other }, sealed))).toMatch(/unable to authenticate/);
    }
    // another tenant has another data key: the id check refuses first
    const known = randomUUID();
    await env.seal({ ...scope, tenantId: known }, 'its own');
    expect(await rejection(env.open({ ...scope, tenantId: known }, sealed))).toBe('sealed with an unknown data key');
  });

  it('a tenant that has sealed nothing opens nothing, and the open does not create its data key (a read-only role may not GenerateDataKey)', async () => {
    const sealed = await env.seal(scopeOf(), 'value');
    const stranger = randomUUID();
    expect(await rejection(env.open(scopeOf(stranger), sealed))).toBe('sealed with an unknown data key');
    expect(await t.get(dekKey(stranger))).toBeUndefined();
    // the refusal is not cached: the tenant's first seal creates its key and its values open
    const own = scopeOf(stranger);
    expect((await env.open(own, await env.seal(own, 'mine'))).toString()).toBe('mine');
  });

  it('a value sealed before the tenant data key was replaced (rotation: the old id is unknown)', async () => {
    const now = vi.spyOn(Date, 'now');
    const start = Date.parse('2031-01-01T00:00:00.000Z');
    now.mockReturnValue(start);
    const scope = scopeOf();
    const before = await env.seal(scope, 'old');
    await t.remove(dekKey(scope.tenantId));
    now.mockReturnValue(start + 301_000); // past the cache lifetime
    const after = await env.seal(scope, 'new');
    expect(Buffer.from(after).subarray(1, 17).equals(Buffer.from(before).subarray(1, 17))).toBe(false);
    expect(await rejection(env.open(scope, before))).toBe('sealed with an unknown data key');
    expect((await env.open(scope, after)).toString()).toBe('new');
  });
});

describe('data key cache', () => {
  it('a warm seal or open reads nothing; the key is read again from the instant its lifetime (300 s) ends', async () => {
    const now = vi.spyOn(Date, 'now');
    const start = Date.parse('2032-01-01T00:00:00.000Z');
    now.mockReturnValue(start);
    const scope = scopeOf();
    const sealed = await env.seal(scope, 'v'); // creates the key (one read)
    const reads = countDekReads();
    now.mockReturnValue(start + 299_999);
    await env.open(scope, sealed);
    await env.seal(scope, 'w');
    expect(reads).toEqual([]);
    now.mockReturnValue(start + 300_000);
    await env.open(scope, sealed);
    expect(reads).toEqual([`T#${scope.tenantId}`]);
    // re-cached from that read: warm again
    now.mockReturnValue(start + 300_001);
    await env.seal(scope, 'x');
    expect(reads).toHaveLength(1);
  });

});

describe('the first seal of a tenant', () => {
  it('creates the data key with a condition, so that concurrent first seals agree on one key', async () => {
    const scope = scopeOf();
    const sealed = await Promise.all(Array.from({ length: 8 }, () => env.seal(scope, 'same')));
    const ids = new Set(sealed.map((s) => Buffer.from(s).subarray(1, 17).toString('hex')));
    expect(ids.size).toBe(1);
    for (const s of sealed) expect((await env.open(scope, s)).toString()).toBe('same');
  });

  it('losing the race: the winner key is read back and used (the loser never seals with its own)', async () => {
    const scope = scopeOf();
    const theirs = await env.keyProvider().generateDataKey({ tenant_id: scope.tenantId });
    const theirId = randomUUID();
    let raced = false;
    undo.push(
      intercept(t.db(), async (command, input) => {
        if (command === 'PutItemCommand' && input.Item?.sk === 'DEK#CURRENT' && !raced) {
          raced = true;
          // another process creates the key between this process's read and its write
          await t.put({ ...dekKey(scope.tenantId), dek_id: theirId, wrapped: theirs.wrapped, provider: 'local', created_at: new Date().toISOString() });
        }
        return undefined;
      }),
    );
    const sealed = Buffer.from(await env.seal(scope, 'value'));
    expect(raced).toBe(true);
    expect(uuidOf(sealed.subarray(1, 17))).toBe(theirId);
    expect((await t.get(dekKey(scope.tenantId)))!.dek_id).toBe(theirId);
    expect((await env.open(scope, sealed)).toString()).toBe('value');
  });

  it('a failed condition with no item to read back, or any other write error, fails the seal', async () => {
    const scope = scopeOf();
    const refused = await conditionFailed();
    const remove = intercept(t.db(), (command, input) => {
      if (command === 'PutItemCommand' && input.Item?.sk === 'DEK#CURRENT') throw refused;
      return undefined;
    });
    undo.push(remove);
    await expect(env.seal(scope, 'v')).rejects.toBe(refused);
    remove();
    undo.pop();
    const broken = new Error('table unavailable');
    undo.push(
      intercept(t.db(), (command, input) => {
        if (command === 'PutItemCommand' && input.Item?.sk === 'DEK#CURRENT') throw broken;
        return undefined;
      }),
    );
    await expect(env.seal(scopeOf(), 'v')).rejects.toBe(broken);
  });

  it('an error other than a failed condition is not a lost race: it propagates even when a key exists by then', async () => {
    const scope = scopeOf();
    const theirs = await env.keyProvider().generateDataKey({ tenant_id: scope.tenantId });
    const broken = new Error('ProvisionedThroughputExceeded');
    let done = false;
    undo.push(
      intercept(t.db(), async (command, input) => {
        if (!done && command === 'PutItemCommand' && input.Item?.sk === 'DEK#CURRENT' && input.Item?.pk === `T#${scope.tenantId}`) {
          done = true;
          await t.put({ ...dekKey(scope.tenantId), dek_id: randomUUID(), wrapped: theirs.wrapped, provider: 'local', created_at: new Date().toISOString() });
          throw broken;
        }
        return undefined;
      }),
    );
    await expect(env.seal(scope, 'v')).rejects.toBe(broken);
  });

  it('stores the wrapped key, the provider, the key id and when, only if none exists', async () => {
    const scope = scopeOf();
    const puts: Record<string, any>[] = [];
    undo.push(
      intercept(t.db(), (command, input) => {
        if (command === 'PutItemCommand' && input.Item?.sk === 'DEK#CURRENT') puts.push(input);
        return undefined;
      }),
    );
    const before = Date.now();
    await env.seal(scope, 'v');
    expect(puts).toHaveLength(1);
    expect(puts[0]).toMatchObject({ ConditionExpression: 'attribute_not_exists(pk)', Item: { pk: `T#${scope.tenantId}`, sk: 'DEK#CURRENT', provider: 'local' } });
    expect(Date.parse(puts[0]!.Item.created_at)).toBeGreaterThanOrEqual(before - 1000);
    // the stored key is the one that seals
    const stored = await t.get(dekKey(scope.tenantId));
    expect(stored!.created_at).toBe(puts[0]!.Item.created_at);
  });
});

describe('JSON helpers', () => {
  it('sealJson seals the JSON text; openJson parses it back', async () => {
    const scope = scopeOf();
    const value = { a: 1, b: ['x', null], c: { d: 'CANARY-json' } };
    const sealed = await env.sealJson(scope, value);
    expect(sealed[0]).toBe(1);
    expect((await env.open(scope, sealed)).toString('utf8')).toBe(JSON.stringify(value));
    expect(await env.openJson(scope, sealed)).toEqual(value);
    expect(await env.openJson(scope, await env.seal(scope, '"é"'))).toBe('é');
    await expect(env.openJson({ ...scope, version: 2 }, sealed)).rejects.toThrow();
  });
});

describe('data key cache bound', () => {
  it('keeps at most 5000 tenants: the oldest entry goes first (slow: last in this file)', async () => {
    // the table is answered in-process here: 5001 tenants without 10,000 round trips
    const wrapped = new Map<string, Record<string, unknown>>();
    const reads: string[] = [];
    undo.push(
      intercept(t.db(), (command, input) => {
        if (input.Key?.sk === 'DEK#CURRENT' || input.Item?.sk === 'DEK#CURRENT') {
          if (command === 'GetItemCommand') {
            reads.push(input.Key.pk as string);
            return { output: wrapped.has(input.Key.pk) ? { Item: wrapped.get(input.Key.pk) } : {} };
          }
          if (command === 'PutItemCommand') {
            wrapped.set(input.Item.pk as string, input.Item as Record<string, unknown>);
            return { output: {} };
          }
        }
        return undefined;
      }),
    );
    // 5000 new tenants: the cache holds exactly these (any older entries went first)
    const tenants = Array.from({ length: 5001 }, () => randomUUID());
    for (const tenantId of tenants.slice(0, 5000)) await env.seal(scopeOf(tenantId), 'v');
    reads.length = 0;
    await env.seal(scopeOf(tenants[0]!), 'v'); // the first is still cached at 5000 entries
    await env.seal(scopeOf(tenants[4999]!), 'v');
    expect(reads).toEqual([]);
    await env.seal(scopeOf(tenants[5000]!), 'v'); // the 5001st evicts the oldest entry: the first
    expect(reads).toEqual([`T#${tenants[5000]}`]);
    await env.seal(scopeOf(tenants[1]!), 'v');
    await env.seal(scopeOf(tenants[0]!), 'v');
    expect(reads).toEqual([`T#${tenants[5000]}`, `T#${tenants[0]}`]);
  });
});

describe('the configured key provider', () => {
  it('KEY_PROVIDER=kms: data keys come from KMS under the configured key, in the configured region, with the tenant context', async () => {
    const { vi } = await import('vitest');
    const { GenerateDataKeyCommand, KMSClient } = await import('@aws-sdk/client-kms');
    const { mockClient } = await import('aws-sdk-client-mock');
    const saved = { ...process.env };
    const kms = mockClient(KMSClient);
    try {
      Object.assign(process.env, { KEY_PROVIDER: 'kms', KMS_KEY_ID: 'arn:aws:kms:eu-west-1:111122223333:key/k-1', AWS_REGION: 'eu-west-1' });
      delete process.env.LOCAL_MASTER_KEY_FILE;
      vi.resetModules();
      const fresh = await import('../../lib/crypto/envelope.js');
      kms.on(GenerateDataKeyCommand).resolves({ Plaintext: randomBytes(32), CiphertextBlob: Buffer.from('wrapped-by-kms') });
      const provider = fresh.keyProvider();
      expect(provider.name).toBe('kms');
      expect(fresh.keyProvider()).toBe(provider); // created once
      await provider.generateDataKey({ tenant_id: 't-9' });
      const call = kms.commandCalls(GenerateDataKeyCommand)[0]!;
      expect(call.args[0].input).toEqual({ KeyId: 'arn:aws:kms:eu-west-1:111122223333:key/k-1', KeySpec: 'AES_256', EncryptionContext: { tenant_id: 't-9' } });
      expect(await (call.thisValue as InstanceType<typeof KMSClient>).config.region()).toBe('eu-west-1');
    } finally {
      kms.restore();
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
      vi.resetModules();
    }
  });

  it('KEY_PROVIDER=local: the keyring of the configured master key file, created once', () => {
    const provider = env.keyProvider();
    expect(provider.name).toBe('local');
    expect(env.keyProvider()).toBe(provider);
  });
});

import { randomUUID } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { speculate } from '../../lib/core/admission.js';
import type { SigningBackend } from '../../lib/signing/backend.js';
import { table } from './table.js';

/**
 * Issue 32, item 2: admission before anything that costs or reaches out. A speculative run
 * (a GET, PUT /secrets/{name}, POST /crypto/sign, a lease issue) whose admission fails (a
 * suspended account, over quota, an IP outside the allow-list) never reaches KMS (a data
 * key's GenerateDataKey or Decrypt), the signing device (HSM or KMS signing) or the heavy
 * render; admitted, the same run does. KMS calls are counted on the local keyring's
 * announcement channel, the one the artifact runtime's IAM evaluation tier subscribes to
 * (one message per KMS request the keyring stands in for).
 */
const KMS_CHANNEL = 'secrets-api:local-kms';
const kmsCalls: string[] = [];
const onKms = (message: unknown) => kmsCalls.push((message as { operation: string }).operation);

beforeAll(async () => {
  await table();
  subscribe(KMS_CHANNEL, onKms);
});
afterAll(() => unsubscribe(KMS_CHANNEL, onKms));

const refused = () => Promise.reject(Object.assign(new Error('tenant_suspended'), { status: 403 }));
const scopeOf = () => ({ tenantId: randomUUID(), type: 'secret', id: randomUUID(), version: 1 });

describe('KMS waits for admission', () => {
  it("a refused run's first seal (GenerateDataKey) and open (Decrypt) never reach KMS; admitted, they do", async () => {
    const env = await import('../../lib/crypto/envelope.js');
    // a data key that exists (made outside any run), for the Decrypt path: its cache entry
    // has expired a day later
    const existing = scopeOf();
    const sealed = await env.seal(existing, 'x');
    kmsCalls.length = 0;

    const first = await speculate(refused(), () => env.seal(scopeOf(), 'never sealed'));
    const later = Date.now() + 86_400_000;
    const now = vi.spyOn(Date, 'now').mockReturnValue(later);
    const opened = await speculate(refused(), () => env.open(existing, sealed));
    now.mockRestore();
    expect('error' in first.outcome && 'error' in opened.outcome).toBe(true);
    expect(kmsCalls).toEqual([]);

    const ok = await speculate(Promise.resolve(), () => env.seal(scopeOf(), 'sealed'));
    expect(ok.outcome).toHaveProperty('value');
    expect(kmsCalls).toEqual(['GenerateDataKey']);
  });
});

describe('the signing device waits for admission', () => {
  it("a refused run's sign, generate and destroy never reach the backend; admitted, sign does", async () => {
    const registry = await import('../../lib/signing/registry.js');
    const calls: string[] = [];
    const device: SigningBackend = {
      name: `counting-${randomUUID().slice(0, 8)}`,
      status: async () => ({ name: 'counting', configured: true, reachable: true, status: 'available', key_specs: [], algorithms: [] }),
      generateKey: async () => {
        calls.push('generate');
        return { ref: { handle: 'h' }, spki: Buffer.alloc(0) };
      },
      sign: async () => {
        calls.push('sign');
        return Buffer.from('sig');
      },
      destroyKey: async () => {
        calls.push('destroy');
      },
    };
    registry.setSigningBackend(device);
    const backend = registry.signingBackend(device.name)!;
    const message = Buffer.from('m');
    const runs: (() => Promise<unknown>)[] = [
      () => backend.sign({ handle: 'h' }, 'ECDSA_P256_SHA256', message),
      () => backend.generateKey('EC_P256', { tenantId: 't', keyId: 'k' }),
      () => backend.destroyKey({ handle: 'h' }),
    ];
    for (const run of runs) {
      const { outcome } = await speculate(refused(), run);
      expect(outcome).toHaveProperty('error');
    }
    expect(calls).toEqual([]);
    const { outcome } = await speculate(Promise.resolve(), () => backend.sign({ handle: 'h' }, 'ECDSA_P256_SHA256', message));
    expect(outcome).toEqual({ value: Buffer.from('sig') });
    expect(calls).toEqual(['sign']);
  });
});

import { afterEach, describe, expect, it, vi } from 'vitest';

/**
 * lib/config.ts: every environment variable parsed once, failing fast with every problem
 * named; the development-only switches are refused with KMS (that is, in AWS).
 */
const saved = { ...process.env };
afterEach(() => {
  for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
  Object.assign(process.env, saved);
  vi.resetModules();
});

const CLEAR = [
  'TABLE_NAME',
  'DYNAMODB_ENDPOINT',
  'KEY_PROVIDER',
  'KMS_KEY_ID',
  'LOCAL_MASTER_KEY_FILE',
  'QUEUE_PROVIDER',
  'WEBHOOKS_ALLOW_LOOPBACK',
  'ACME_ALLOW_LOOPBACK',
  'DATABASE_ALLOW_LOOPBACK',
  'SIGNING_KMS_ENABLED',
  'DATA_KEY_CACHE_SECONDS',
  'MAX_JSON_DEPTH',
];
async function load(env: Record<string, string>) {
  for (const k of CLEAR) delete process.env[k];
  Object.assign(process.env, env);
  vi.resetModules();
  const { config } = await import('../../lib/config.js');
  return config;
}
const KMS = { KEY_PROVIDER: 'kms', KMS_KEY_ID: 'arn:aws:kms:eu-west-1:111122223333:key/k' };
const LOCAL = { KEY_PROVIDER: 'local', LOCAL_MASTER_KEY_FILE: '/tmp/master.key' };

describe('configuration', () => {
  it('defaults', async () => {
    const cfg = (await load(KMS))();
    expect(cfg).toMatchObject({
      TABLE_NAME: 'secrets',
      AWS_REGION: expect.any(String),
      KEY_PROVIDER: 'kms',
      DATA_KEY_CACHE_SECONDS: 300,
      MAX_JSON_DEPTH: 16,
      QUEUE_PROVIDER: 'sqs',
      WEBHOOKS_ALLOW_LOOPBACK: false,
      ACME_ALLOW_LOOPBACK: false,
      DATABASE_ALLOW_LOOPBACK: false,
      RATE_LIMIT_IP_PER_MINUTE: 6000,
      LEASE_SWEEP_INTERVAL_SECONDS: 60,
    });
    expect(cfg.SIGNING_KMS_ENABLED).toBeUndefined();
  });

  it('parsed once: later changes of the environment do not apply', async () => {
    const config = await load({ ...KMS, TABLE_NAME: 'first' });
    expect(config().TABLE_NAME).toBe('first');
    process.env.TABLE_NAME = 'second';
    expect(config().TABLE_NAME).toBe('first');
  });

  it('switches: "1" and "true" are on, "0" and "false" off, anything else refused', async () => {
    for (const [v, on] of [
      ['1', true],
      ['true', true],
      ['0', false],
      ['false', false],
    ] as const) {
      const cfg = (
        await load({ ...LOCAL, WEBHOOKS_ALLOW_LOOPBACK: v, ACME_ALLOW_LOOPBACK: v, DATABASE_ALLOW_LOOPBACK: v, SIGNING_KMS_ENABLED: v })
      )();
      expect([cfg.WEBHOOKS_ALLOW_LOOPBACK, cfg.ACME_ALLOW_LOOPBACK, cfg.DATABASE_ALLOW_LOOPBACK, cfg.SIGNING_KMS_ENABLED]).toEqual([on, on, on, on]);
    }
    await expect(load({ ...LOCAL, WEBHOOKS_ALLOW_LOOPBACK: 'yes' }).then((c) => c())).rejects.toThrow(/WEBHOOKS_ALLOW_LOOPBACK/);
  });

  it('numbers are coerced and bounded', async () => {
    expect((await load({ ...KMS, DATA_KEY_CACHE_SECONDS: '0', MAX_JSON_DEPTH: '64' }))()).toMatchObject({
      DATA_KEY_CACHE_SECONDS: 0,
      MAX_JSON_DEPTH: 64,
    });
    await expect(load({ ...KMS, DATA_KEY_CACHE_SECONDS: '3601' }).then((c) => c())).rejects.toThrow('invalid configuration: DATA_KEY_CACHE_SECONDS:');
    await expect(load({ ...KMS, MAX_JSON_DEPTH: '1' }).then((c) => c())).rejects.toThrow(/MAX_JSON_DEPTH/);
    await expect(load({ ...KMS, DYNAMODB_ENDPOINT: 'not a url' }).then((c) => c())).rejects.toThrow(/DYNAMODB_ENDPOINT/);
  });

  it('KMS needs its key; the local keyring its master key file', async () => {
    await expect(load({ KEY_PROVIDER: 'kms' }).then((c) => c())).rejects.toThrow(
      'invalid configuration: KMS_KEY_ID: KMS_KEY_ID is required when KEY_PROVIDER=kms',
    );
    await expect(load({ KEY_PROVIDER: 'local' }).then((c) => c())).rejects.toThrow(
      'invalid configuration: LOCAL_MASTER_KEY_FILE: LOCAL_MASTER_KEY_FILE is required when KEY_PROVIDER=local',
    );
    expect((await load(LOCAL))().KEY_PROVIDER).toBe('local');
  });

  it('development-only switches are refused with KMS, each by name, all at once', async () => {
    const problems = {
      DATABASE_ALLOW_LOOPBACK: ['1', 'DATABASE_ALLOW_LOOPBACK: loopback database servers are for local development only (not with KEY_PROVIDER=kms)'],
      ACME_ALLOW_LOOPBACK: ['true', 'ACME_ALLOW_LOOPBACK: loopback ACME directories are for local development only (not with KEY_PROVIDER=kms)'],
      WEBHOOKS_ALLOW_LOOPBACK: [
        '1',
        'WEBHOOKS_ALLOW_LOOPBACK: loopback webhook receivers are for local development only (not with KEY_PROVIDER=kms)',
      ],
      QUEUE_PROVIDER: ['memory', 'QUEUE_PROVIDER: the in-process queue is for the local runtime only (not with KEY_PROVIDER=kms)'],
    } as const;
    for (const [name, [value, message]] of Object.entries(problems)) {
      await expect(load({ ...KMS, [name]: value }).then((c) => c())).rejects.toThrow(`invalid configuration: ${message}`);
      // with the local keyring the same switch is accepted
      await expect(load({ ...LOCAL, [name]: value }).then((c) => c())).resolves.toBeDefined();
    }
    const all = load({ KEY_PROVIDER: 'kms', DATABASE_ALLOW_LOOPBACK: '1', QUEUE_PROVIDER: 'memory' }).then((c) => c());
    await expect(all).rejects.toThrow(/KMS_KEY_ID: .*; DATABASE_ALLOW_LOOPBACK: .*; QUEUE_PROVIDER: /);
  });
});

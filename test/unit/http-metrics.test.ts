import { DescribeKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { afterEach, describe, expect, it } from 'vitest';
import { METRIC, metrics, observeClient } from '../../lib/core/metrics.js';

/**
 * lib/core/metrics.ts: a shared AWS client observed with a counter counts every request it
 * starts, answered or not (here a KMS client pointed at a closed local port: the request
 * fails, the call was made and is counted).
 */
afterEach(() => metrics.clearMetrics());

describe('observeClient', () => {
  it('counts each call of a counted client under its metric, with no dimension of its own', async () => {
    metrics.clearMetrics();
    const kms = observeClient(
      new KMSClient({ region: 'us-east-1', endpoint: 'http://127.0.0.1:9', credentials: { accessKeyId: 'x', secretAccessKey: 'x' }, maxAttempts: 1 }),
      METRIC.kmsCalls,
    );
    for (let i = 0; i < 2; i++) await expect(kms.send(new DescribeKeyCommand({ KeyId: 'alias/none' }))).rejects.toThrow();
    const doc = metrics.serializeMetrics() as unknown as Record<string, unknown> & { _aws: { CloudWatchMetrics: { Dimensions: string[][] }[] } };
    expect(doc[METRIC.kmsCalls]).toEqual([1, 1]);
    expect(doc._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service']]);
  });

  it('an uncounted client is returned as it is (tracing is off outside Lambda)', () => {
    const client = new KMSClient({ region: 'us-east-1' });
    expect(observeClient(client)).toBe(client);
    expect(metrics.hasStoredMetrics()).toBe(false);
  });
});

import { DescribeKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { count, METRIC, metricFields, metrics, observeClient } from '../../lib/core/metrics.js';

/**
 * lib/core/metrics.ts: a shared AWS client observed with a counter counts every request it
 * starts, answered or not (here a KMS client pointed at a closed local port: the request
 * fails, the call was made and is counted).
 */
afterEach(() => {
  metrics.clearMetrics();
  vi.restoreAllMocks();
});

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

describe('metricFields: the EMF document as fields of the request line', () => {
  it('nothing stored: nothing carried, nothing published', () => {
    const publish = vi.spyOn(metrics, 'publishStoredMetrics');
    expect(metricFields(true)).toBeUndefined();
    expect(publish).not.toHaveBeenCalled();
  });

  it('inline and metrics on: the document less its service dimension value (the logger\'s own key), then cleared', () => {
    vi.spyOn(metrics, 'off', 'get').mockReturnValue(false);
    count(METRIC.requests);
    const doc = metricFields(true) as Record<string, any>;
    expect(doc).toMatchObject({ requests: 1, _aws: { CloudWatchMetrics: [{ Dimensions: [['service']], Metrics: [{ Name: 'requests', Unit: 'Count' }] }] } });
    expect(doc).not.toHaveProperty('service');
    expect(metrics.hasStoredMetrics()).toBe(false);
  });

  it('not inline, or metrics off: published (on its own line, or not at all when off) and not carried', () => {
    const publish = vi.spyOn(metrics, 'publishStoredMetrics').mockImplementation(() => {
      metrics.clearMetrics();
      return metrics;
    });
    count(METRIC.requests);
    expect(metricFields(false)).toBeUndefined();
    vi.spyOn(metrics, 'off', 'get').mockReturnValue(true);
    count(METRIC.requests);
    expect(metricFields(true)).toBeUndefined();
    expect(publish).toHaveBeenCalledTimes(2);
  });
});

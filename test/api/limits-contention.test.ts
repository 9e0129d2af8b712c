import { readFileSync } from 'node:fs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, inject, it } from 'vitest';
import { keys } from '../../lib/store/keys.js';
import { api, errorCode, newAccount } from '../helpers/api.js';
import { setQuota } from './webhooks.helpers.js';

/**
 * The limiter under contention (lib/ratelimit/bucket.ts): 300 requests at once against an
 * account whose quota is 100 per minute. It admits at most the quota plus the tokens refilled
 * while the burst lasts (the tolerance of docs/operations.md, "Rate limits"), refuses the rest
 * with 429 and Retry-After, counts every request it admitted, and never admits one unchecked.
 */
const doc = DynamoDBDocumentClient.from(
  new DynamoDBClient({ endpoint: inject('dynamoEndpoint'), region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
);

/** Requests counted on the account's usage items of today (its metering partition), all shards. */
async function counted(tenantId: string): Promise<number> {
  const day = new Date().toISOString().slice(0, 10);
  const today = keys.usageDay(tenantId, day);
  const out = await doc.send(
    new QueryCommand({
      TableName: inject('tableName'),
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
      ExpressionAttributeValues: { ':pk': today.pk, ':sk': today.sk },
      ConsistentRead: true,
    }),
  );
  return (out.Items ?? []).reduce((n, i) => n + Number(i.requests ?? 0), 0);
}

describe('rate limit under contention', () => {
  it('300 concurrent requests against 100/min: at most the quota plus the refill admitted, every one counted, the rest 429 with Retry-After, none unchecked', async () => {
    const a = await newAccount('rl-burst');
    await setQuota(a.tenantId, { requests_per_minute: 100 });
    const logFile = inject('logFile');
    const logBefore = readFileSync(logFile, 'utf8').length;
    const before = await counted(a.tenantId);

    const started = Date.now();
    const results = await Promise.all(Array.from({ length: 300 }, () => api('GET', '/api/v1/secrets', { key: a.adminKey })));
    const seconds = (Date.now() - started) / 1000;

    const admitted = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 429);
    expect(results.filter((r) => r.status !== 200 && r.status !== 429).map((r) => `${r.status} ${JSON.stringify(r.body).slice(0, 200)}`)).toEqual([]);
    // the tolerance: tokens refilled while the burst lasted (100/60 per second), plus one partial token
    const tolerance = Math.ceil((seconds * 100) / 60) + 1;
    expect(admitted.length).toBeLessThanOrEqual(100 + tolerance);
    expect(admitted.length).toBeGreaterThanOrEqual(50);
    for (const r of refused) {
      expect(errorCode(r)).toBe('rate_limited');
      const retryAfter = Number(r.headers.get('retry-after'));
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(r.headers.get('ratelimit-policy')).toBe('"account";q=100;w=60');
    }
    // every admitted request was counted on the bucket's item (a refused one was not)
    expect((await counted(a.tenantId)) - before).toBe(admitted.length);
    // and none was let through without its check
    const log = readFileSync(logFile, 'utf8').slice(logBefore);
    expect(log).not.toContain('request admitted');
  });
});

import { randomUUID } from 'node:crypto';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { config } from '../../lib/config.js';
import { EXTENSION_NAME, onShutdown, registerExtension, runShutdownHooks, type RuntimeApiSend } from '../../lib/core/shutdown.js';
import { type BucketRef, flushUncounted, held, take } from '../../lib/ratelimit/bucket.js';
import { db } from '../../lib/store/client.js';
import { keys } from '../../lib/store/keys.js';
import { withTenant } from '../../lib/tenancy/scope.js';

/**
 * A container's end (lib/core/shutdown.ts, lib/ratelimit/bucket.ts `flushUncounted`): the
 * requests a process admitted from its leases and had not written are written by one
 * UpdateItem per account when Lambda sends SIGTERM; the no-event internal extension that makes
 * Lambda send it. The whole path through the built bundles and the artifact runtime's host is
 * test/api/limits.test.ts ("a container's end").
 */
const ddb = mockClient(DynamoDBDocumentClient);
afterAll(() => ddb.restore());
beforeAll(() => {
  // a valid configuration (the unit tier's files share one module graph: it may be read already)
  process.env.KEY_PROVIDER ??= 'kms';
  process.env.KMS_KEY_ID ??= 'arn:aws:kms:eu-west-1:111122223333:key/00000000-0000-0000-0000-000000000000';
});
beforeEach(() => {
  ddb.reset();
  ddb.on(UpdateCommand).resolves({});
});

const DAY_TTL = 400 * 86400;
const capacity = { known: 6000, promise: Promise.resolve(6000) };
const accountRef = (tid: string): BucketRef => ({ policy: 'account', attr: 'rl_', count: true, key: keys.usageDay(tid, '2026-11-28'), ttlSeconds: DAY_TTL });

/** Nine requests of one account in one second: written at the 1st, 2nd and 4th (leases 1, 2, 6), the last five from the lease. */
async function nineRequests(tid: string, nowMs: () => number): Promise<void> {
  for (let i = 0; i < 9; i++) expect((await withTenant(tid, () => take(accountRef(tid), capacity, nowMs))).allowed).toBe(true);
}

describe('the meter at a container\'s end', () => {
  it('writes the requests admitted from a lease and not counted: one ADD on the account\'s usage item, with the tenant\'s client', async () => {
    const tid = `flush-${randomUUID()}`;
    const now = 1_795_000_000_123;
    await nineRequests(tid, () => now);
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(3);
    expect(held(accountRef(tid)).uncounted).toBe(5);

    ddb.resetHistory();
    expect(await flushUncounted(() => now)).toBe(5);
    const calls = ddb.commandCalls(UpdateCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.args[0].input).toEqual({
      TableName: config().TABLE_NAME,
      Key: { pk: `METER#${tid}`, sk: 'USAGE#2026-11-28' },
      UpdateExpression: 'SET #ttl = if_not_exists(#ttl, :ttl) ADD requests :counted',
      ExpressionAttributeNames: { '#ttl': 'ttl' },
      ExpressionAttributeValues: { ':counted': 5, ':ttl': Math.floor(now / 1000) + DAY_TTL },
    });
    // the tenant's own client (its STS session in AWS: the execution role may not write METER#)
    expect(calls[0]!.thisValue).toBe(withTenant(tid, () => db()));
    expect(held(accountRef(tid)).uncounted).toBe(0);

    // nothing is written twice
    ddb.resetHistory();
    expect(await flushUncounted(() => now)).toBe(0);
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('one write per account, all at once; a write that fails keeps its count for the next write', async () => {
    const [a, b] = [`flush-a-${randomUUID()}`, `flush-b-${randomUUID()}`];
    const now = 1_795_000_100_000;
    await nineRequests(a, () => now);
    await nineRequests(b, () => now);
    ddb.reset();
    ddb.on(UpdateCommand, { Key: { pk: `METER#${a}`, sk: 'USAGE#2026-11-28' } }).rejects(Object.assign(new Error('throttled'), { name: 'ThrottlingException' }));
    ddb.on(UpdateCommand, { Key: { pk: `METER#${b}`, sk: 'USAGE#2026-11-28' } }).resolves({});
    expect(await flushUncounted(() => now)).toBe(5);
    expect(ddb.commandCalls(UpdateCommand).map((c) => [c.args[0].input.Key!.pk, c.args[0].input.ExpressionAttributeValues![':counted']])).toEqual([
      [`METER#${a}`, 5],
      [`METER#${b}`, 5],
    ]);
    expect(held(accountRef(a)).uncounted).toBe(5);
    expect(held(accountRef(b)).uncounted).toBe(0);
    // the next write of that account counts them with its own request
    ddb.reset();
    ddb.on(UpdateCommand).resolves({});
    await withTenant(a, () => take(accountRef(a), capacity, () => now + 5_000));
    expect(ddb.commandCalls(UpdateCommand)[0]!.args[0].input.ExpressionAttributeValues![':counted']).toBe(6);
    expect(held(accountRef(a)).uncounted).toBe(0);
  });

  it('a bucket that does not count (per credential, per IP) leaves nothing to write', async () => {
    const tid = `flush-c-${randomUUID()}`;
    const ref: BucketRef = { ...accountRef(tid), policy: 'credential', attr: 'rl_api_key:k1_', count: false };
    for (let i = 0; i < 9; i++) await withTenant(tid, () => take(ref, capacity, () => 1_795_000_200_000));
    ddb.resetHistory();
    expect(await flushUncounted()).toBe(0);
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
  });
});

describe('the graceful-shutdown extension (lib/core/shutdown.ts)', () => {
  const recorder = (answers: Partial<Record<string, { status: number; headers?: Record<string, string>; body?: string }>>) => {
    const sent: { method: string; url: string; headers: Record<string, string>; body?: string }[] = [];
    const send: RuntimeApiSend = (method, url, headers, body) => {
      sent.push({ method, url, headers, ...(body !== undefined ? { body } : {}) });
      const answer = answers[`${method} ${new URL(url).pathname}`];
      // the next of an extension for no events is never answered
      if (!answer) return new Promise(() => undefined);
      return Promise.resolve({ status: answer.status, headers: answer.headers ?? {}, body: answer.body ?? '' });
    };
    return { sent, send };
  };

  it('registers for no events, then sends its first next with the identifier it was given (and does not wait for its answer)', async () => {
    const { sent, send } = recorder({
      'POST /2020-01-01/extension/register': { status: 200, headers: { 'lambda-extension-identifier': 'ext-1' }, body: '{"functionName":"f"}' },
    });
    expect(await registerExtension('127.0.0.1:9001', send)).toBe('ext-1');
    expect(sent).toEqual([
      {
        method: 'POST',
        url: 'http://127.0.0.1:9001/2020-01-01/extension/register',
        headers: { 'Lambda-Extension-Name': EXTENSION_NAME, 'Content-Type': 'application/json' },
        body: '{"events":[]}',
      },
      { method: 'GET', url: 'http://127.0.0.1:9001/2020-01-01/extension/event/next', headers: { 'Lambda-Extension-Identifier': 'ext-1' } },
    ]);
  });

  it('a refused registration (after Init, say) rejects, and no next is sent', async () => {
    const { sent, send } = recorder({ 'POST /2020-01-01/extension/register': { status: 403, body: '{"errorType":"Extension.RegistrationError"}' } });
    await expect(registerExtension('127.0.0.1:9001', send)).rejects.toThrow(/HTTP 403/);
    expect(sent).toHaveLength(1);
  });

  it('without AWS_LAMBDA_RUNTIME_API (tests, the source runtime) nothing is registered; the hooks run when asked', async () => {
    let ran = 0;
    expect(await onShutdown('test hook', async () => void ran++, {})).toBe(false);
    await runShutdownHooks();
    expect(ran).toBe(1);
  });
});

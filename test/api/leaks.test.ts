import { readFileSync } from 'node:fs';
import { describe, expect, it, inject } from 'vitest';
import { api, canary, newAccount } from '../helpers/api.js';
import { findLeaks, scanTable } from '../helpers/leaks.js';

/**
 * Canary values go through every secrets operation, including failing ones; then the whole
 * table and the server's captured structured logs are searched for them and for the API keys
 * used. (The global teardown repeats this over everything the suite stored.)
 */
describe('secret values and keys stay secret', () => {
  it('no canary value or API key in the table, the logs, or an error response', async () => {
    const acct = await newAccount('leaks');
    const values = [canary('leak1'), canary('leak2'), canary('leak3')];
    const created = await api('POST', '/api/v1/secrets', { key: acct.adminKey, body: { name: 'leaky', data: { value: values[0]! } } });
    expect(created.status).toBe(201);
    const etag = created.headers.get('etag')!;
    expect(
      (await api('PUT', '/api/v1/secrets/leaky', { key: acct.adminKey, body: { data: { value: values[1]! } }, headers: { 'if-match': etag } }))
        .status,
    ).toBe(200);
    const stale = await api('PUT', '/api/v1/secrets/leaky', {
      key: acct.adminKey,
      body: { data: { value: values[2]! } },
      headers: { 'if-match': etag },
    });
    expect(stale.status).toBe(409);
    const dup = await api('POST', '/api/v1/secrets', { key: acct.adminKey, body: { name: 'leaky', data: { value: values[2]! } } });
    expect(dup.status).toBe(409);
    const invalid = await api('POST', '/api/v1/secrets', {
      key: acct.adminKey,
      body: { name: 'bad name!', data: { value: values[2]! }, extra: values[2]! },
    });
    expect(invalid.status).toBe(400);
    const notJson = await api('POST', '/api/v1/secrets', {
      key: acct.adminKey,
      rawBody: `{"data": {"value": "${values[2]!}"`,
      headers: { 'content-type': 'application/json' },
    });
    expect(notJson.status).toBe(400);
    for (const r of [stale, dup, invalid, notJson]) for (const v of values) expect(r.text).not.toContain(v);
    expect((await api('DELETE', '/api/v1/secrets/leaky', { key: acct.adminKey })).status).toBe(200);
    await api('POST', '/api/v1/secrets', { key: acct.adminKey, body: { name: 'kept', data: { value: values[0]! } } });

    // the table: sealed values only, under the names and metadata
    const items = await scanTable(inject('dynamoEndpoint'), inject('tableName'));
    const mine = items.filter((i) => String(i.pk).includes(acct.tenantId));
    expect(mine.some((i) => String(i.sk) === 'SECRET#kept' && i.value instanceof Uint8Array)).toBe(true);

    // give the server a moment to flush its last log lines
    await new Promise((r) => setTimeout(r, 200));
    const leaks = await findLeaks({
      dynamoEndpoint: inject('dynamoEndpoint'),
      tableName: inject('tableName'),
      logText: readFileSync(inject('logFile'), 'utf8'),
      extra: [...values, acct.adminKey, inject('rootKey')],
    });
    expect(leaks).toEqual([]);
  });
});

import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { config } from '../../lib/config.js';
import { keys } from '../../lib/store/keys.js';
import { markLookupItems } from '../../lib/store/lookup-marks.js';
import { ownerMark } from '../../lib/tenancy/lookups.js';
import { table } from './table.js';

/**
 * The owner marks of lookup items through the real document client (lib/store/client.ts) and
 * the migration of a table written before them (lib/store/lookup-marks.ts,
 * `npm run operator:migrate-lookup-marks`).
 */
let t: Awaited<ReturnType<typeof table>>;
/** A client without the mark middleware: the table as an older release (or an attacker's session) wrote it. */
let raw: DynamoDBDocumentClient;
beforeAll(async () => {
  t = await table();
  const cfg = config();
  raw = DynamoDBDocumentClient.from(
    new DynamoDBClient({ region: cfg.AWS_REGION, endpoint: cfg.DYNAMODB_ENDPOINT, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
  );
});
const rawPut = (item: Record<string, unknown>) => raw.send(new PutCommand({ TableName: t.tableName(), Item: item }));
const rawGet = async (key: { pk: string; sk: string }) => (await raw.send(new GetCommand({ TableName: t.tableName(), Key: key, ConsistentRead: true }))).Item;

describe('lookup owner marks in the table', () => {
  it('a lookup item written through the client carries its mark in the table, and reads back without it', async () => {
    const tid = randomUUID();
    const key = keys.apiKeyAuth(randomUUID());
    await t.put({ ...key, tenant_id: tid, key_id: 'k1' });
    expect(await rawGet(key)).toEqual({ ...key, tenant_id: tid, key_id: 'k1', [ownerMark(tid)]: true });
    expect(await t.get(key)).toEqual({ ...key, tenant_id: tid, key_id: 'k1' });
  });

  it('a read drops an item marked by another account than the one it names, and an unmarked one', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    const forged = keys.apiKeyAuth(randomUUID());
    await rawPut({ ...forged, tenant_id: b, key_id: 'k1', [ownerMark(a)]: true });
    expect(await t.get(forged)).toBeUndefined();
    const unmarked = keys.apiKeyAuth(randomUUID());
    await rawPut({ ...unmarked, tenant_id: b, key_id: 'k1' });
    expect(await t.get(unmarked)).toBeUndefined();
  });

  it('the migration marks unmarked lookup items with the account they name, leaves forged ones refused, and is safe to repeat', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    const old = keys.apiTokenAuth(randomUUID());
    const share = keys.sharedWith(`${randomUUID()}@example.com`, 'secret', 'r1');
    const forged = keys.tempToken(randomUUID());
    const own = { ...keys.apiKey(a, 'k1'), name: 'not a lookup' };
    await rawPut({ ...old, tenant_id: a, token_id: 't1' });
    await rawPut({ ...share, owner_tenant_id: b, resource_id: 'r1' });
    await rawPut({ ...forged, tenant_id: b, [ownerMark(a)]: true });
    await rawPut(own);
    const first = await markLookupItems();
    expect(first.marked).toBeGreaterThanOrEqual(2);
    expect(first.forged).toBeGreaterThanOrEqual(1);
    expect(await rawGet(old)).toEqual({ ...old, tenant_id: a, token_id: 't1', [ownerMark(a)]: true });
    expect(await t.get(old)).toEqual({ ...old, tenant_id: a, token_id: 't1' });
    expect(await t.get(share)).toEqual({ ...share, owner_tenant_id: b, resource_id: 'r1' });
    expect(await rawGet(forged)).toEqual({ ...forged, tenant_id: b, [ownerMark(a)]: true });
    expect(await t.get(forged)).toBeUndefined();
    expect(await rawGet(keys.apiKey(a, 'k1'))).toEqual(own);
    await markLookupItems();
    expect(await rawGet(old)).toEqual({ ...old, tenant_id: a, token_id: 't1', [ownerMark(a)]: true });
  });
});

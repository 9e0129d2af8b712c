import { randomUUID } from 'node:crypto';
import { DeleteTableCommand, DescribeTableCommand, DescribeTimeToLiveCommand, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { deployTable } from '../../scripts/local/artifact/tables.js';
import { localClient } from '../../scripts/local/dynamodb.js';

/**
 * The artifact runtime's table on a restart (scripts/local/artifact/tables.ts): `npm run
 * start:artifact` a second time over the same DATA_DIR failed with DynamoDB Local's "Cannot
 * create preexisting table". On the suite's DynamoDB Local, with the properties the data
 * stack's template gives the table (keys, an index, the stream, the TTL).
 */
const client = localClient(inject('dynamoEndpoint'));
const names: string[] = [];
const fresh = () => {
  const name = `artifact-table-${randomUUID()}`;
  names.push(name);
  return name;
};
const TEMPLATE = {
  BillingMode: 'PAY_PER_REQUEST',
  AttributeDefinitions: [
    { AttributeName: 'pk', AttributeType: 'S' },
    { AttributeName: 'sk', AttributeType: 'S' },
    { AttributeName: 'gsi1pk', AttributeType: 'S' },
  ],
  KeySchema: [
    { AttributeName: 'pk', KeyType: 'HASH' },
    { AttributeName: 'sk', KeyType: 'RANGE' },
  ],
  GlobalSecondaryIndexes: [{ IndexName: 'gsi1', KeySchema: [{ AttributeName: 'gsi1pk', KeyType: 'HASH' }], Projection: { ProjectionType: 'ALL' } }],
  StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
  TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true },
};

afterAll(async () => {
  for (const TableName of names) await client.send(new DeleteTableCommand({ TableName })).catch(() => undefined);
});

describe('the artifact runtime deploys its table', () => {
  it('creates it as the template declares it, then keeps it and its items on a restart', async () => {
    const name = fresh();
    expect(await deployTable(client, name, TEMPLATE, '/data/dynamodb')).toBe('created');
    const table = (await client.send(new DescribeTableCommand({ TableName: name }))).Table!;
    expect(table.GlobalSecondaryIndexes?.map((g) => g.IndexName)).toEqual(['gsi1']);
    expect(table.StreamSpecification).toMatchObject({ StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' });
    expect((await client.send(new DescribeTimeToLiveCommand({ TableName: name }))).TimeToLiveDescription).toMatchObject({ AttributeName: 'ttl' });

    const key = { pk: { S: 'T#restart' }, sk: { S: 'ITEM' } };
    await client.send(new PutItemCommand({ TableName: name, Item: { ...key, value: { S: 'kept' } } }));
    // the restart: same table, TTL already on (turning it on again would be a ValidationException)
    expect(await deployTable(client, name, TEMPLATE, '/data/dynamodb')).toBe('kept');
    expect((await client.send(new GetItemCommand({ TableName: name, Key: key, ConsistentRead: true }))).Item?.value).toEqual({ S: 'kept' });
  });

  it('stops on a table of another shape, naming what differs and the directory, and leaves the table as it was', async () => {
    const name = fresh();
    // an older template: no index (nor the attribute only the index used)
    const older = { ...TEMPLATE, AttributeDefinitions: TEMPLATE.AttributeDefinitions.slice(0, 2), GlobalSecondaryIndexes: undefined };
    await deployTable(client, name, older, '/data/dynamodb');
    const key = { pk: { S: 'T#older' }, sk: { S: 'ITEM' } };
    await client.send(new PutItemCommand({ TableName: name, Item: { ...key, value: { S: 'still here' } } }));

    const refused = deployTable(client, name, TEMPLATE, '/data/dynamodb');
    await expect(refused).rejects.toThrow(/is not the template's .*gsi1.*remove \/data\/dynamodb \(its data goes with it\) or set DATA_DIR/);
    expect((await client.send(new DescribeTableCommand({ TableName: name }))).Table?.GlobalSecondaryIndexes).toBeUndefined();
    expect((await client.send(new GetItemCommand({ TableName: name, Key: key, ConsistentRead: true }))).Item?.value).toEqual({ S: 'still here' });
  });
});

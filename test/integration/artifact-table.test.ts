import { randomUUID } from 'node:crypto';
import { DeleteTableCommand, DescribeTableCommand, DescribeTimeToLiveCommand, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { TABLE_DEFINITION } from '../../lib/store/keys.js';
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
/** The table as the data stack declares it (infra/data-stack.ts from TABLE_DEFINITION), as its template's Properties. */
const TEMPLATE = {
  BillingMode: 'PAY_PER_REQUEST',
  AttributeDefinitions: [...TABLE_DEFINITION.attributeDefinitions],
  KeySchema: [...TABLE_DEFINITION.keySchema],
  GlobalSecondaryIndexes: [TABLE_DEFINITION.gsi1, TABLE_DEFINITION.plat],
  StreamSpecification: { StreamViewType: TABLE_DEFINITION.streamViewType },
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
    expect(table.GlobalSecondaryIndexes?.map((g) => g.IndexName).sort()).toEqual(['gsi1', 'plat']);
    expect(table.StreamSpecification).toMatchObject({ StreamEnabled: true, StreamViewType: TABLE_DEFINITION.streamViewType });
    expect((await client.send(new DescribeTimeToLiveCommand({ TableName: name }))).TimeToLiveDescription).toMatchObject({ AttributeName: 'ttl' });

    const key = { pk: { S: 'T#restart' }, sk: { S: 'ITEM' } };
    await client.send(new PutItemCommand({ TableName: name, Item: { ...key, value: { S: 'kept' } } }));
    // the restart: same table, TTL already on (turning it on again would be a ValidationException)
    expect(await deployTable(client, name, TEMPLATE, '/data/dynamodb')).toBe('kept');
    expect((await client.send(new GetItemCommand({ TableName: name, Key: key, ConsistentRead: true }))).Item?.value).toEqual({ S: 'kept' });
  });

  it('stops on a table of another shape, naming what differs and the directory, and leaves the table as it was', async () => {
    const name = fresh();
    // a table from before the platform listings had their own index
    const older = {
      ...TEMPLATE,
      AttributeDefinitions: TEMPLATE.AttributeDefinitions.filter((a) => !a.AttributeName.startsWith('plat')),
      GlobalSecondaryIndexes: [TABLE_DEFINITION.gsi1],
    };
    await deployTable(client, name, older, '/data/dynamodb');
    const key = { pk: { S: 'T#older' }, sk: { S: 'ITEM' } };
    await client.send(new PutItemCommand({ TableName: name, Item: { ...key, value: { S: 'still here' } } }));

    const refused = deployTable(client, name, TEMPLATE, '/data/dynamodb');
    await expect(refused).rejects.toThrow(/is not the template's .*plat=.*remove \/data\/dynamodb \(its data goes with it\) or set DATA_DIR/);
    expect((await client.send(new DescribeTableCommand({ TableName: name }))).Table?.GlobalSecondaryIndexes?.map((g) => g.IndexName)).toEqual([
      'gsi1',
    ]);
    expect((await client.send(new GetItemCommand({ TableName: name, Key: key, ConsistentRead: true }))).Item?.value).toEqual({ S: 'still here' });
  });
});

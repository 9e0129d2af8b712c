import { randomUUID } from 'node:crypto';
import {
  DeleteTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { TABLE_DEFINITION } from '../../lib/store/keys.js';
import { localClient } from '../../scripts/local/dynamodb.js';
import { deployTable, TABLE_PROPERTIES } from '../../scripts/local/tables.js';

/**
 * The local runtimes' table on a start over a kept DATA_DIR (scripts/local/tables.ts): `npm
 * run start:artifact` a second time failed with DynamoDB Local's "Cannot create preexisting
 * table", and the two runtimes each had their own routine. On the suite's DynamoDB Local, with
 * the properties the data stack's template gives the table (keys, indexes, stream, TTL).
 */
const client = localClient(inject('dynamoEndpoint'));
const names: string[] = [];
const fresh = () => {
  const name = `local-table-${randomUUID()}`;
  names.push(name);
  return name;
};
const WHERE = '/data/dynamodb';
const describeTable = async (name: string) => (await client.send(new DescribeTableCommand({ TableName: name }))).Table!;
const read = async (name: string, key: Record<string, { S: string }>) =>
  (await client.send(new GetItemCommand({ TableName: name, Key: key, ConsistentRead: true }))).Item?.value;

afterAll(async () => {
  for (const TableName of names) await client.send(new DeleteTableCommand({ TableName })).catch(() => undefined);
});

describe('the local runtimes deploy their table', () => {
  it('creates it as the template declares it, then keeps it and its items on a restart', async () => {
    const name = fresh();
    expect(await deployTable(client, name, TABLE_PROPERTIES, WHERE)).toBe('created');
    const table = await describeTable(name);
    expect(table.GlobalSecondaryIndexes?.map((g) => g.IndexName).sort()).toEqual(['gsi1', 'plat']);
    expect(table.StreamSpecification).toMatchObject({ StreamEnabled: true, StreamViewType: TABLE_DEFINITION.streamViewType });
    expect((await client.send(new DescribeTimeToLiveCommand({ TableName: name }))).TimeToLiveDescription).toMatchObject({ AttributeName: 'ttl' });

    const key = { pk: { S: 'T#restart' }, sk: { S: 'ITEM' } };
    await client.send(new PutItemCommand({ TableName: name, Item: { ...key, value: { S: 'kept' } } }));
    // the restart: same table, TTL already on (turning it on again would be a ValidationException)
    expect(await deployTable(client, name, TABLE_PROPERTIES, WHERE)).toBe('kept');
    expect(await read(name, key)).toEqual({ S: 'kept' });
  });

  it('updates a table of an older template in place, as cdk deploy would: the new index (filled from the items) and the stream, the items kept', async () => {
    const name = fresh();
    // from before the platform listings had their own index and before the outbox moved to the stream
    const older = {
      ...TABLE_PROPERTIES,
      AttributeDefinitions: TABLE_PROPERTIES.AttributeDefinitions.filter((a: { AttributeName: string }) => !a.AttributeName.startsWith('plat')),
      GlobalSecondaryIndexes: [TABLE_PROPERTIES.GlobalSecondaryIndexes[0]],
      StreamSpecification: undefined,
    };
    expect(await deployTable(client, name, older, WHERE)).toBe('created');
    expect((await describeTable(name)).StreamSpecification?.StreamEnabled).not.toBe(true);
    const key = { pk: { S: 'T#older' }, sk: { S: 'LEASE#1' } };
    await client.send(
      new PutItemCommand({ TableName: name, Item: { ...key, platpk: { S: 'LEASES' }, platsk: { S: '1' }, value: { S: 'still here' } } }),
    );

    expect(await deployTable(client, name, TABLE_PROPERTIES, WHERE)).toBe('updated');
    const table = await describeTable(name);
    expect(table.GlobalSecondaryIndexes?.map((g) => g.IndexName).sort()).toEqual(['gsi1', 'plat']);
    expect(table.StreamSpecification).toMatchObject({ StreamEnabled: true, StreamViewType: TABLE_DEFINITION.streamViewType });
    expect(await read(name, key)).toEqual({ S: 'still here' });
    const listed = await client.send(
      new QueryCommand({
        TableName: name,
        IndexName: 'plat',
        KeyConditionExpression: 'platpk = :p',
        ExpressionAttributeValues: { ':p': { S: 'LEASES' } },
      }),
    );
    expect(listed.Items?.map((i) => i.sk?.S)).toEqual(['LEASE#1']);
    expect(await deployTable(client, name, TABLE_PROPERTIES, WHERE)).toBe('kept');
  });

  it('stops on a table no update in place can fix, naming what differs and the directory, and leaves it as it was', async () => {
    const name = fresh();
    const otherKeys = {
      ...TABLE_PROPERTIES,
      AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      GlobalSecondaryIndexes: undefined,
    };
    await deployTable(client, name, otherKeys, WHERE);
    const key = { id: { S: 'other' } };
    await client.send(new PutItemCommand({ TableName: name, Item: { ...key, value: { S: 'untouched' } } }));

    const refused = deployTable(client, name, TABLE_PROPERTIES, WHERE);
    await expect(refused).rejects.toThrow(
      /the table .* in \/data\/dynamodb is not the template's and cannot be updated in place \(its keys are \[\["id","HASH"\]\].*remove \/data\/dynamodb \(its data goes with it\) or set DATA_DIR/,
    );
    const table = await describeTable(name);
    expect(table.GlobalSecondaryIndexes ?? []).toEqual([]);
    expect(await read(name, key)).toEqual({ S: 'untouched' });
  });

  it('stops on an index of the same name on other keys', async () => {
    const name = fresh();
    const [gsi1, plat] = TABLE_PROPERTIES.GlobalSecondaryIndexes;
    // gsi1 on the platform listings' keys, the other way round
    const swapped = {
      ...TABLE_PROPERTIES,
      AttributeDefinitions: TABLE_PROPERTIES.AttributeDefinitions.filter((a: { AttributeName: string }) => !a.AttributeName.startsWith('gsi1')),
      GlobalSecondaryIndexes: [
        {
          ...gsi1,
          KeySchema: [
            { AttributeName: 'platsk', KeyType: 'HASH' },
            { AttributeName: 'platpk', KeyType: 'RANGE' },
          ],
        },
        plat,
      ],
    };
    await deployTable(client, name, swapped, WHERE);
    await expect(deployTable(client, name, TABLE_PROPERTIES, WHERE)).rejects.toThrow(
      /its index gsi1 is on \[\["platsk","HASH"\],\["platpk","RANGE"\]\], the template's on \[\["gsi1pk","HASH"\],\["gsi1sk","RANGE"\]\]/,
    );
  });
});

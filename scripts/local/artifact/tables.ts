/**
 * The template's table on DynamoDB Local. The first start creates it as the template declares
 * it; a restart over the same DATA_DIR finds it there with the last run's data and keeps it
 * when its keys, indexes and stream are the template's. A table that differs (a DATA_DIR from
 * an older template) stops the start with what differs and what to do, instead of DynamoDB
 * Local's "Cannot create preexisting table" (the restart of `npm run start:artifact` failed
 * so before).
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
  ResourceNotFoundException,
  type TableDescription,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';

/** A CloudFormation AWS::DynamoDB::Table's Properties. */
type TableProperties = Record<string, any>;

/** What decides whether a kept table serves the template: its keys, its indexes' keys and its stream's view. */
function shape(keys: unknown, indexes: readonly { IndexName?: string; KeySchema?: unknown }[] | undefined, streamView: string | undefined): string {
  const index = (indexes ?? []).map((i) => `${i.IndexName}=${JSON.stringify(i.KeySchema)}`).sort();
  return JSON.stringify({ keys, indexes: index, stream: streamView ?? null });
}

const declared = (p: TableProperties) =>
  shape(p.KeySchema, p.GlobalSecondaryIndexes, p.StreamSpecification ? p.StreamSpecification.StreamViewType : undefined);
const existing = (t: TableDescription) =>
  shape(
    t.KeySchema?.map((k) => ({ AttributeName: k.AttributeName, KeyType: k.KeyType })),
    t.GlobalSecondaryIndexes?.map((g) => ({
      IndexName: g.IndexName,
      KeySchema: g.KeySchema?.map((k) => ({ AttributeName: k.AttributeName, KeyType: k.KeyType })),
    })),
    t.StreamSpecification?.StreamEnabled ? t.StreamSpecification.StreamViewType : undefined,
  );

/**
 * Creates the table `name` as `properties` (the AWS::DynamoDB::Table's) declare it, or keeps
 * the one already there when it has the same shape; `where` names the data directory in the
 * error for one that differs. Returns which of the two happened.
 */
export async function deployTable(client: DynamoDBClient, name: string, properties: TableProperties, where: string): Promise<'created' | 'kept'> {
  const p = properties;
  let found: TableDescription | undefined;
  try {
    found = (await client.send(new DescribeTableCommand({ TableName: name }))).Table;
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
  if (found) {
    if (existing(found) !== declared(p)) {
      throw new Error(
        `the table ${name} in ${where} is not the template's (it has ${existing(found)}; the template declares ${declared(p)}): ` +
          `remove ${where} (its data goes with it) or set DATA_DIR to another directory`,
      );
    }
  } else {
    await client.send(
      new CreateTableCommand({
        TableName: name,
        BillingMode: p.BillingMode ?? 'PAY_PER_REQUEST',
        AttributeDefinitions: p.AttributeDefinitions,
        KeySchema: p.KeySchema,
        ...(p.GlobalSecondaryIndexes ? { GlobalSecondaryIndexes: p.GlobalSecondaryIndexes } : {}),
        ...(p.LocalSecondaryIndexes ? { LocalSecondaryIndexes: p.LocalSecondaryIndexes } : {}),
        ...(p.ProvisionedThroughput ? { ProvisionedThroughput: p.ProvisionedThroughput } : {}),
        ...(p.StreamSpecification ? { StreamSpecification: { StreamEnabled: true, StreamViewType: p.StreamSpecification.StreamViewType } } : {}),
      }),
    );
  }
  if (p.TimeToLiveSpecification?.Enabled) {
    // turning on a TTL that is on already is a ValidationException
    const ttl = (await client.send(new DescribeTimeToLiveCommand({ TableName: name }))).TimeToLiveDescription;
    const on = ttl?.TimeToLiveStatus === 'ENABLED' || ttl?.TimeToLiveStatus === 'ENABLING';
    if (!on || ttl?.AttributeName !== p.TimeToLiveSpecification.AttributeName) {
      await client.send(new UpdateTimeToLiveCommand({ TableName: name, TimeToLiveSpecification: p.TimeToLiveSpecification }));
    }
  }
  return found ? 'kept' : 'created';
}

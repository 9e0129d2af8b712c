/**
 * The single table on DynamoDB Local, for both local runtimes (the source runtime from
 * TABLE_DEFINITION, the artifact runtime from the data stack's template) and the suite's
 * tables: the first start creates it as declared; a restart over the same DATA_DIR finds it
 * with the last run's data and keeps it. A table of an older template is brought up to date as
 * `cdk deploy` would update it in place (a new index is created, the stream turned on), its
 * items kept. A table `cdk deploy` could not update in place (other primary keys, an index of
 * the same name on other keys, another stream view, an index the template does not declare)
 * stops the start, saying what differs and naming the directory, instead of DynamoDB Local's
 * "Cannot create preexisting table" (the restart of `npm run start:artifact` failed so) or a
 * table that silently does not serve the code.
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
  type KeySchemaElement,
  ResourceNotFoundException,
  type TableDescription,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { TABLE_DEFINITION, TABLE_KEYS } from '../../lib/store/keys.js';

/** A CloudFormation AWS::DynamoDB::Table's Properties. */
type TableProperties = Record<string, any>;
type Index = { IndexName?: string; KeySchema?: KeySchemaElement[] };

/** The table as the data stack declares it (infra/data-stack.ts, from TABLE_DEFINITION), as its template's Properties. */
export const TABLE_PROPERTIES: TableProperties = {
  BillingMode: 'PAY_PER_REQUEST',
  AttributeDefinitions: [...TABLE_DEFINITION.attributeDefinitions],
  KeySchema: [...TABLE_DEFINITION.keySchema],
  GlobalSecondaryIndexes: [TABLE_DEFINITION.gsi1, TABLE_DEFINITION.plat].map((i) => ({ ...i, KeySchema: [...i.KeySchema] })),
  StreamSpecification: { StreamViewType: TABLE_DEFINITION.streamViewType },
  TimeToLiveSpecification: { AttributeName: TABLE_KEYS.ttl, Enabled: true },
};

const keysOf = (k: readonly KeySchemaElement[] | undefined) => JSON.stringify((k ?? []).map((e) => [e.AttributeName, e.KeyType]));

/** What keeps `found` from serving `p` that an in-place update cannot change, or undefined. */
function conflict(found: TableDescription, p: TableProperties): string | undefined {
  if (keysOf(found.KeySchema) !== keysOf(p.KeySchema)) return `its keys are ${keysOf(found.KeySchema)}, the template's ${keysOf(p.KeySchema)}`;
  const declared = new Map<string, Index>((p.GlobalSecondaryIndexes ?? []).map((i: Index) => [i.IndexName!, i]));
  for (const index of found.GlobalSecondaryIndexes ?? []) {
    const want = declared.get(index.IndexName!);
    if (!want) return `it has the index ${index.IndexName}, which the template does not declare`;
    if (keysOf(index.KeySchema) !== keysOf(want.KeySchema))
      return `its index ${index.IndexName} is on ${keysOf(index.KeySchema)}, the template's on ${keysOf(want.KeySchema)}`;
  }
  const view = found.StreamSpecification?.StreamEnabled ? found.StreamSpecification.StreamViewType : undefined;
  const wanted = p.StreamSpecification?.StreamViewType;
  if (view && view !== wanted) return `its stream carries ${view}, the template's ${wanted ?? 'no stream'}`;
  return undefined;
}

/**
 * Waits until the table and its indexes are ACTIVE, as CloudFormation does before it reports the
 * update complete: a new index is CREATING while it is filled from the items, and a query on it
 * then fails (DynamoDB Local answers InternalFailure).
 */
async function untilActive(client: DynamoDBClient, name: string, timeoutMs = 120_000): Promise<void> {
  for (const until = Date.now() + timeoutMs; ; ) {
    const t = (await client.send(new DescribeTableCommand({ TableName: name }))).Table;
    if (t?.TableStatus === 'ACTIVE' && (t.GlobalSecondaryIndexes ?? []).every((g) => g.IndexStatus === 'ACTIVE')) return;
    if (Date.now() > until) throw new Error(`the table ${name} was not ACTIVE with its indexes within ${timeoutMs / 1000} s of its update`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Creates the table `name` as `properties` (the AWS::DynamoDB::Table's) declare it, keeps the
 * one already there, or updates it in place to the template (its missing indexes, its stream).
 * `where` names the data in the error for a table that cannot be updated. Returns which.
 */
export async function deployTable(
  client: DynamoDBClient,
  name: string,
  properties: TableProperties,
  where: string,
): Promise<'created' | 'kept' | 'updated'> {
  const p = properties;
  let found: TableDescription | undefined;
  try {
    found = (await client.send(new DescribeTableCommand({ TableName: name }))).Table;
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
  const stream = p.StreamSpecification ? { StreamEnabled: true, StreamViewType: p.StreamSpecification.StreamViewType } : undefined;
  let outcome: 'created' | 'kept' | 'updated' = found ? 'kept' : 'created';
  if (found) {
    const why = conflict(found, p);
    if (why)
      throw new Error(
        `the table ${name} in ${where} is not the template's and cannot be updated in place (${why}): remove ${where} (its data goes with it) or set DATA_DIR to another directory`,
      );
    const present = new Set((found.GlobalSecondaryIndexes ?? []).map((i) => i.IndexName));
    // one index per update, as DynamoDB allows
    for (const index of (p.GlobalSecondaryIndexes ?? []) as Index[]) {
      if (present.has(index.IndexName)) continue;
      await client.send(
        new UpdateTableCommand({
          TableName: name,
          AttributeDefinitions: p.AttributeDefinitions,
          GlobalSecondaryIndexUpdates: [{ Create: index as never }],
        }),
      );
      outcome = 'updated';
    }
    if (stream && !found.StreamSpecification?.StreamEnabled) {
      await client.send(new UpdateTableCommand({ TableName: name, StreamSpecification: stream }));
      outcome = 'updated';
    }
    if (outcome === 'updated') await untilActive(client, name);
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
        ...(stream ? { StreamSpecification: stream } : {}),
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
  return outcome;
}

import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';

/**
 * Every secret value a test stores contains CANARY (see canary() in api.ts); every API key
 * matches the key format. Neither may appear in the table in plaintext or in any log line.
 */
export const CANARY_RE = /CANARY-[A-Za-z0-9_-]+/g;
export const API_KEY_IN_TEXT_RE = /scm_[a-z2-7]{8}_[A-Za-z0-9_-]{43}/g;

/** One client per endpoint for the test process: a wait polls every 100 ms, and a client per read opened a connection per read. */
const clients = new Map<string, DynamoDBDocumentClient>();
const documentClient = (dynamoEndpoint: string): DynamoDBDocumentClient => {
  let doc = clients.get(dynamoEndpoint);
  if (!doc) {
    doc = DynamoDBDocumentClient.from(
      new DynamoDBClient({ endpoint: dynamoEndpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
    );
    clients.set(dynamoEndpoint, doc);
  }
  return doc;
};

/**
 * The items of one partition whose sort key starts with `skPrefix`, as the table holds them (a
 * test's look at its own account's items). A test that polls for a change of one item reads
 * it this way, not by scanning the whole table every 100 ms: a wait of a minute was a hundred
 * scans of a table of thousands of items, on the DynamoDB Local the relay it waits for uses.
 */
export async function partitionItems(dynamoEndpoint: string, tableName: string, pk: string, skPrefix: string): Promise<Record<string, unknown>[]> {
  const doc = documentClient(dynamoEndpoint);
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await doc.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        ExpressionAttributeValues: { ':pk': pk, ':p': skPrefix },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

export async function scanTable(dynamoEndpoint: string, tableName: string): Promise<Record<string, unknown>[]> {
  const doc = documentClient(dynamoEndpoint);
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await doc.send(new ScanCommand({ TableName: tableName, ExclusiveStartKey: start }));
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

/** Renders an item with binary attributes decoded as text too, so a plaintext value inside bytes is found. */
function render(item: unknown): string {
  return JSON.stringify(item, (_k, v: unknown) =>
    v instanceof Uint8Array ? `${Buffer.from(v).toString('latin1')} ${Buffer.from(v).toString('utf8')}` : v,
  );
}

export async function findLeaks(opts: { dynamoEndpoint: string; tableName: string; logText: string; extra?: string[] }): Promise<string[]> {
  const leaks: string[] = [];
  const items = await scanTable(opts.dynamoEndpoint, opts.tableName);
  for (const item of items) {
    const text = render(item);
    for (const re of [CANARY_RE, API_KEY_IN_TEXT_RE]) {
      for (const m of text.matchAll(re)) leaks.push(`table ${String(item.pk)} ${String(item.sk)}: ${m[0].slice(0, 24)}…`);
    }
    for (const s of opts.extra ?? []) if (text.includes(s)) leaks.push(`table ${String(item.pk)} ${String(item.sk)}: ${s.slice(0, 12)}…`);
  }
  for (const re of [CANARY_RE, API_KEY_IN_TEXT_RE]) {
    for (const m of opts.logText.matchAll(re)) leaks.push(`log: ${m[0].slice(0, 24)}…`);
  }
  for (const s of opts.extra ?? []) if (opts.logText.includes(s)) leaks.push(`log: ${s.slice(0, 12)}…`);
  return leaks;
}

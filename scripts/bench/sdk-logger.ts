/**
 * `npx tsx scripts/bench/sdk-logger.ts [ROUNDS]`: what the AWS SDK's logger middleware costs a
 * DynamoDB document client that has no logger. The SDK's default logger is a no-op, but its
 * middleware still builds a filtered copy of every input and output (`schemaLogFilter` walks
 * each item of a query's answer) to hand to that no-op. lib/store/client.ts removes the
 * middleware. This measures this process's own CPU (process.cpuUsage) for the same calls
 * through two clients alike but for that middleware, alternately, ROUNDS times (default 5):
 * 300 queries of 25 items and 300 gets each, against DynamoDB Local. Prints each round's CPU
 * milliseconds and the median ratio without/with. It asserts nothing.
 */
import { BatchWriteCommand, DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ensureTable, localClient, startDynamoLocal, stopDynamoLocal, waitForDynamo } from '../local/dynamodb.js';
import { freePort } from '../local/ports.js';

const ROUNDS = Number(process.argv[2] ?? 5);
const CALLS = 300;
const TABLE = 'bench-sdk-logger';

const port = await freePort();
const child = startDynamoLocal({ port });
const endpoint = `http://127.0.0.1:${port}`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
try {
  await waitForDynamo(endpoint, 120_000, child);
  // the suite's own table (its keys, indexes and stream), as the runtimes deploy it
  await ensureTable(endpoint, TABLE);
  const withLogger = DynamoDBDocumentClient.from(localClient(endpoint));
  const plainClient = localClient(endpoint);
  plainClient.middlewareStack.remove('loggerMiddleware');
  const withoutLogger = DynamoDBDocumentClient.from(plainClient);
  const items = Array.from({ length: 25 }, (_, i) => ({
    pk: 'P',
    sk: `S#${String(i).padStart(3, '0')}`,
    name: `item ${i}`,
    tags: ['a', 'b'],
    meta: { n: i, at: new Date(0).toISOString() },
  }));
  await withLogger.send(new BatchWriteCommand({ RequestItems: { [TABLE]: items.map((Item) => ({ PutRequest: { Item } })) } }));

  const work = async (db: DynamoDBDocumentClient): Promise<number> => {
    const start = process.cpuUsage();
    for (let i = 0; i < CALLS; i++) {
      const [q, g] = await Promise.all([
        db.send(new QueryCommand({ TableName: TABLE, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': 'P' } })),
        db.send(new GetCommand({ TableName: TABLE, Key: { pk: 'P', sk: 'S#007' } })),
      ]);
      if (q.Items?.length !== 25 || !g.Item) throw new Error('the table does not hold the bench items');
    }
    const used = process.cpuUsage(start);
    return (used.user + used.system) / 1000;
  };
  // one warm-up round each: the first calls compile the SDK's code paths
  await work(withLogger);
  await work(withoutLogger);
  const a: number[] = [];
  const b: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    a.push(await work(withLogger));
    b.push(await work(withoutLogger));
    process.stdout.write(`round ${r + 1}: with the logger middleware ${a.at(-1)!.toFixed(0)} ms CPU, without ${b.at(-1)!.toFixed(0)} ms\n`);
  }
  process.stdout.write(
    `median of ${ROUNDS}: with ${median(a).toFixed(0)} ms, without ${median(b).toFixed(0)} ms for ${CALLS} queries and ${CALLS} gets; without/with ${(median(b) / median(a)).toFixed(3)}\n`,
  );
} finally {
  await stopDynamoLocal(child);
}

/**
 * `npx tsx scripts/bench/dynamodb-local.ts [ROUNDS]`: DynamoDB Local's CPU under the JVM's
 * defaults (the baseline) and under JVM_FLAGS (scripts/local/dynamodb.ts), alternately, ROUNDS
 * times (default 3), on the same load: 6,000 puts, 6,000 consistent gets, 6,000 counter updates
 * and 600 queries on a table with a stream, 8 at a time. Prints each round's Java CPU seconds
 * and wall, then the medians and the ratio flags/defaults. It asserts nothing.
 */
import { readFileSync } from 'node:fs';
import { CreateTableCommand, GetItemCommand, PutItemCommand, QueryCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { JVM_FLAGS, localClient, startDynamoLocal, stopDynamoLocal, waitForDynamo } from '../local/dynamodb.js';
import { freePort } from '../local/ports.js';

const ROUNDS = Number(process.argv[2] ?? 3);
const N = 6000;
const TABLE = 'bench-jvm';

/** utime + stime of a process, in seconds. */
const cpuOf = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
};

async function round(jvmFlags: readonly string[]): Promise<{ cpu: number; wall: number }> {
  const port = await freePort();
  const child = startDynamoLocal({ port, jvmFlags });
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await waitForDynamo(endpoint, 120_000, child);
    const db = localClient(endpoint);
    await db.send(
      new CreateTableCommand({
        TableName: TABLE,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
      }),
    );
    const before = cpuOf(child.pid!);
    const started = Date.now();
    let next = 0;
    const worker = async () => {
      while (next < N) {
        const n = next++;
        const pk = `T#${n % 50}`;
        await db.send(new PutItemCommand({ TableName: TABLE, Item: { pk: { S: pk }, sk: { S: `S#${n}` }, v: { S: 'x'.repeat(200) } } }));
        await db.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: pk }, sk: { S: `S#${n}` } }, ConsistentRead: true }));
        await db.send(
          new UpdateItemCommand({ TableName: TABLE, Key: { pk: { S: pk }, sk: { S: 'COUNT' } }, UpdateExpression: 'ADD n :one', ExpressionAttributeValues: { ':one': { N: '1' } } }),
        );
        if (n % 10 === 0) {
          await db.send(new QueryCommand({ TableName: TABLE, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': { S: pk } }, Limit: 20 }));
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    return { cpu: cpuOf(child.pid!) - before, wall: (Date.now() - started) / 1000 };
  } finally {
    await stopDynamoLocal(child);
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const runs = { defaults: [] as { cpu: number; wall: number }[], flags: [] as { cpu: number; wall: number }[] };
for (let i = 0; i < ROUNDS; i++) {
  for (const [name, flags] of [
    ['defaults', []],
    ['flags', JVM_FLAGS],
  ] as const) {
    const r = await round(flags);
    runs[name].push(r);
    process.stdout.write(`round ${i + 1} ${name.padEnd(8)} java ${r.cpu.toFixed(1)} CPU-s, load ${r.wall.toFixed(1)} s wall\n`);
  }
}
const cpu = { defaults: median(runs.defaults.map((r) => r.cpu)), flags: median(runs.flags.map((r) => r.cpu)) };
const wall = { defaults: median(runs.defaults.map((r) => r.wall)), flags: median(runs.flags.map((r) => r.wall)) };
process.stdout.write(
  `medians of ${ROUNDS}: JVM defaults ${cpu.defaults.toFixed(1)} CPU-s / ${wall.defaults.toFixed(1)} s; ${JVM_FLAGS.join(' ')} ${cpu.flags.toFixed(1)} CPU-s / ${wall.flags.toFixed(1)} s; ratio CPU ${(cpu.flags / cpu.defaults).toFixed(2)}, wall ${(wall.flags / wall.defaults).toFixed(2)}\n`,
);

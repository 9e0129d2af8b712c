/**
 * Benchmark: authenticated GET /api/v1/secrets/{name} and PUT with If-Match through the
 * local gateway, next to their floor: the same DynamoDB calls made bare through the SDK
 * against the same DynamoDB Local, at the same concurrency, in the same run. Reports
 * throughput, p50/p99 and the API/floor throughput ratio (target: >= 0.75).
 *
 *   npm run bench            (BENCH_SECONDS=10 BENCH_CONCURRENCY=16 by default)
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { Agent } from 'node:http';
import { randomBytes } from 'node:crypto';
import { generateApiKey, hashApiKey } from '../../lib/auth/api-keys.js';
import { keys } from '../../lib/store/keys.js';
import { closedLoop, fmt, http, startRuntime, type Result } from './harness.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const TABLE = 'secrets';

async function main() {
  const rootKey = generateApiKey().key;
  const rt = await startRuntime(rootKey);
  try {
    const tenant = await http('POST', `${rt.baseUrl}/api/v1/admin/tenants`, { authorization: `Bearer ${rootKey}` }, JSON.stringify({ name: 'bench', admin_email: 'bench@example.test', quota: { requests_per_minute: 100_000_000, requests_per_minute_per_credential: 100_000_000 } }));
    const created = JSON.parse(tenant.text).data;
    const key: string = created.api_key.key;
    const tid: string = created.tenant.id;
    const auth = { authorization: `Bearer ${key}` };
    const value = () => JSON.stringify({ data: { value: randomBytes(24).toString('base64url') } });

    // one secret per worker, so PUT workers never contend with each other
    const etags: string[] = [];
    for (let w = 0; w < CONCURRENCY; w++) {
      const r = await http('POST', `${rt.baseUrl}/api/v1/secrets`, auth, JSON.stringify({ name: `bench-${w}`, data: { value: 'x' } }));
      etags.push(r.headers.etag as string);
    }

    const doc = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint: rt.dynamoEndpoint,
        region: 'us-east-1',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
        requestHandler: new NodeHttpHandler({ httpAgent: new Agent({ keepAlive: true, maxSockets: 64 }) }),
      }),
    );
    const hash = hashApiKey(key);
    const day = new Date().toISOString().slice(0, 10);
    // The calls the API makes per request: auth item, tenant item, usage meter (concurrent), then the work.
    const authCalls = async () => {
      await doc.send(new GetCommand({ TableName: TABLE, Key: keys.apiKeyAuth(hash), ConsistentRead: true }));
      await doc.send(new GetCommand({ TableName: TABLE, Key: keys.tenant(tid), ConsistentRead: true }));
      return doc.send(new UpdateCommand({ TableName: TABLE, Key: keys.usageDay(tid, day), UpdateExpression: 'ADD requests :one', ExpressionAttributeValues: { ':one': 1 } }));
    };
    const floorGet = async (w: number) => {
      const meter = authCalls();
      await doc.send(new GetCommand({ TableName: TABLE, Key: keys.secret(tid, `bench-${w}`), ConsistentRead: true }));
      await meter;
    };
    const floorVersions = new Array<number>(CONCURRENCY).fill(1000);
    const floorPut = async (w: number) => {
      const meter = authCalls();
      const head = await doc.send(new GetCommand({ TableName: TABLE, Key: keys.secret(tid, `floor-${w}`), ConsistentRead: true }));
      const v = ((head.Item?.version as number) ?? 0) + 1;
      floorVersions[w] = v;
      const blob = randomBytes(64);
      await doc.send(
        new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName: TABLE, Item: { ...keys.secret(tid, `floor-${w}`), version: v, value: blob }, ...(v > 1 ? { ConditionExpression: 'version = :v', ExpressionAttributeValues: { ':v': v - 1 } } : {}) } },
            { Put: { TableName: TABLE, Item: { ...keys.version(tid, 'floor', String(w), v), value: blob }, ConditionExpression: 'attribute_not_exists(pk)' } },
            { Delete: { TableName: TABLE, Key: keys.version(tid, 'floor', String(w), Math.max(0, v - 10)) } },
            { Put: { TableName: TABLE, Item: { ...keys.audit(tid, `${w}-${v}-${randomBytes(4).toString('hex')}`), action: 'x' }, ConditionExpression: 'attribute_not_exists(pk)' } },
            { Put: { TableName: TABLE, Item: { ...keys.outbox(tid, `${w}-${v}-${randomBytes(4).toString('hex')}`), type: 'x' }, ConditionExpression: 'attribute_not_exists(pk)' } },
          ],
        }),
      );
      await meter;
    };

    const apiGet = async (w: number) => {
      const r = await http('GET', `${rt.baseUrl}/api/v1/secrets/bench-${w}`, auth);
      if (r.status !== 200) throw new Error(`GET ${r.status} ${r.text}`);
    };
    const apiPut = async (w: number) => {
      const r = await http('PUT', `${rt.baseUrl}/api/v1/secrets/bench-${w}`, { ...auth, 'if-match': etags[w]! }, value());
      if (r.status !== 200) throw new Error(`PUT ${r.status} ${r.text}`);
      etags[w] = r.headers.etag as string;
    };

    const opts = { concurrency: CONCURRENCY, seconds: SECONDS, warmupSeconds: 2 };
    const results: Result[] = [];
    // Interleave floor and API so drift on a shared machine hits both alike.
    results.push(await closedLoop('floor  GET (bare SDK calls)', floorGet, opts));
    results.push(await closedLoop('api    GET /api/v1/secrets/{name}', apiGet, opts));
    results.push(await closedLoop('floor  PUT (bare SDK calls)', floorPut, opts));
    results.push(await closedLoop('api    PUT /api/v1/secrets/{name}', apiPut, opts));

    const [fg, ag, fp, ap] = results as [Result, Result, Result, Result];
    process.stdout.write(`\nsecrets benchmark: ${CONCURRENCY} concurrent clients, ${SECONDS} s per phase, DynamoDB Local, ${new Date().toISOString()}\n`);
    for (const r of results) process.stdout.write(`${fmt(r)}\n`);
    process.stdout.write(`ratio GET api/floor: ${(ag.throughput / fg.throughput).toFixed(2)}   ratio PUT api/floor: ${(ap.throughput / fp.throughput).toFixed(2)}   (target >= 0.75)\n`);
  } finally {
    rt.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error).stack ?? error)}\n`);
  process.exit(1);
});

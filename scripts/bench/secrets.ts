/**
 * Benchmark: authenticated GET /api/v1/secrets/{name} and PUT with If-Match through the
 * local gateway, next to their floor: the same DynamoDB calls made bare through the SDK
 * against the same DynamoDB Local, at the same concurrency, in the same run, in the fewest
 * round trips they allow (the key item; then the account item, the rate-limit/usage write
 * and the secret's head together; for PUT then the transaction). Reports throughput,
 * p50/p99 and the API/floor throughput ratio (target: >= 0.75). `npm run bench:trips`
 * prints the same figures beside the round trips per route. Then the cost of tenancy by IAM:
 * the first table call of a tenant per container against a warm one (scripts/bench/tenancy.ts).
 *
 *   npm run bench            (BENCH_SECONDS=10 BENCH_CONCURRENCY=16 by default)
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { Agent } from 'node:http';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateApiKey, hashApiKey } from '../../lib/auth/api-keys.js';
import { keys } from '../../lib/store/keys.js';
import { closedLoop, fmt, http, startRuntime, type Result } from './harness.js';
import { printTenancyBench, tenancyBench, type TenancyBench } from './tenancy.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const TABLE = 'secrets';

export interface SecretsBench {
  readonly results: Result[];
  readonly ratioGet: number;
  readonly ratioPut: number;
  /** The first table call of a tenant per container vs a warm one (lib/tenancy). */
  readonly tenancy: TenancyBench;
  readonly concurrency: number;
  readonly seconds: number;
}

export async function secretsBench(): Promise<SecretsBench> {
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
    // The calls the API makes per request, in its round trips: the key item first; then the
    // account item and the usage/rate-limit write beside the request's own first read.
    const authThen = async (work: () => Promise<unknown>) => {
      await doc.send(new GetCommand({ TableName: TABLE, Key: keys.apiKeyAuth(hash), ConsistentRead: true }));
      const [, , out] = await Promise.all([
        doc.send(new GetCommand({ TableName: TABLE, Key: keys.tenant(tid), ConsistentRead: true })),
        doc.send(new UpdateCommand({ TableName: TABLE, Key: keys.usageDay(tid, day), UpdateExpression: 'ADD requests :one', ExpressionAttributeValues: { ':one': 1 } })),
        work(),
      ]);
      return out;
    };
    const floorGet = async (w: number) => {
      await authThen(() => doc.send(new GetCommand({ TableName: TABLE, Key: keys.secret(tid, `bench-${w}`), ConsistentRead: true })));
    };
    const floorVersions = new Array<number>(CONCURRENCY).fill(1000);
    const floorPut = async (w: number) => {
      const head = (await authThen(() => doc.send(new GetCommand({ TableName: TABLE, Key: keys.secret(tid, `floor-${w}`), ConsistentRead: true })))) as {
        Item?: Record<string, unknown>;
      };
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
    const tenancy = await tenancyBench(rt.dynamoEndpoint);
    return { results, tenancy, ratioGet: ag.throughput / fg.throughput, ratioPut: ap.throughput / fp.throughput, concurrency: CONCURRENCY, seconds: SECONDS };
  } finally {
    rt.stop();
  }
}

export function printSecretsBench(b: SecretsBench): void {
  process.stdout.write(`\nsecrets benchmark: ${b.concurrency} concurrent clients, ${b.seconds} s per phase, DynamoDB Local, ${new Date().toISOString()}\n`);
  for (const r of b.results) process.stdout.write(`${fmt(r)}\n`);
  process.stdout.write(`ratio GET api/floor: ${b.ratioGet.toFixed(2)}   ratio PUT api/floor: ${b.ratioPut.toFixed(2)}   (target >= 0.75)\n`);
  printTenancyBench(b.tenancy);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  secretsBench()
    .then(printSecretsBench)
    .catch((error: unknown) => {
      process.stderr.write(`${String((error as Error).stack ?? error)}\n`);
      process.exit(1);
    });
}

/**
 * Benchmark: how long after a read-only route's answer its audit entry is in the table
 * (lib/audit/queue.ts: SendMessage before the answer, the audit writer's put after), on the
 * source runtime (`npm start`: fauxqs, the writer's SQS mapping in process, DynamoDB Local).
 * Sequential sensitive reads (POST /api/v1/export/json) and denials (the same route with a key
 * without export:read); after each answer the account's partition is read consistently every
 * 2 ms until the new entry is there. docs/operations.md ("Audit") quotes the result.
 *
 *   npx tsx scripts/bench/audit-queue.ts      (AUDIT_BENCH_REQUESTS=100)
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { generateApiKey } from '../../lib/auth/api-keys.js';
import { http, startRuntime } from './harness.js';

const REQUESTS = Number(process.env.AUDIT_BENCH_REQUESTS ?? 100);

const root = generateApiKey().key;
const runtime = await startRuntime(root);
try {
  const doc = DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint: runtime.dynamoEndpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
  );
  const json = (key: string) => ({ authorization: `Bearer ${key}` });
  const made = await http('POST', `${runtime.baseUrl}/api/v1/admin/tenants`, json(root), JSON.stringify({ name: 'audit-bench', admin_email: 'audit-bench@example.test' }));
  if (made.status !== 201) throw new Error(`tenant: ${made.status} ${made.text}`);
  const { tenant, api_key } = JSON.parse(made.text).data as { tenant: { id: string }; api_key: { key: string } };
  const narrowRes = await http('POST', `${runtime.baseUrl}/api/v1/api-keys`, json(api_key.key), JSON.stringify({ name: 'narrow', scopes: ['audit:read'] }));
  const narrow = (JSON.parse(narrowRes.text).data as { api_key: { key: string } }).api_key.key;

  const entries = async () =>
    (
      await doc.send(
        new QueryCommand({
          TableName: 'secrets',
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :a)',
          ExpressionAttributeValues: { ':pk': `T#${tenant.id}`, ':a': 'AUDIT#' },
          Select: 'COUNT',
          ConsistentRead: true,
        }),
      )
    ).Count ?? 0;

  const run = async (name: string, key: string, expected: number) => {
    const answers: number[] = [];
    const visible: number[] = [];
    for (let i = 0; i < REQUESTS + 5; i++) {
      const before = await entries();
      const t0 = performance.now();
      const res = await http('POST', `${runtime.baseUrl}/api/v1/export/json`, json(key), '{}');
      const t1 = performance.now();
      if (res.status !== expected) throw new Error(`${name}: ${res.status} ${res.text.slice(0, 300)}`);
      while ((await entries()) <= before) await new Promise((r) => setTimeout(r, 2));
      const t2 = performance.now();
      if (i < 5) continue; // warm-up
      answers.push(t1 - t0);
      visible.push(t2 - t1);
    }
    const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
    process.stdout.write(
      `${name.padEnd(34)} answer p50 ${pct(answers, 50).toFixed(1).padStart(6)} ms  p99 ${pct(answers, 99).toFixed(1).padStart(6)} ms   entry in the table after the answer: p50 ${pct(visible, 50).toFixed(1).padStart(6)} ms  p99 ${pct(visible, 99).toFixed(1).padStart(6)} ms  max ${Math.max(...visible).toFixed(1)} ms\n`,
    );
  };
  process.stdout.write(`${REQUESTS} requests each, one at a time (source runtime)\n`);
  await run('sensitive read (export.json, 200)', api_key.key, 200);
  await run('denial (insufficient_scope, 403)', narrow, 403);
} finally {
  runtime.stop();
}

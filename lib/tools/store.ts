import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/v4';
import { db, tableName } from '../store/client.js';
import { entity } from '../store/entity.js';
import { keys } from '../store/keys.js';

/**
 * The tools feature's store module (the one place its DynamoDB commands are built): the
 * extraction jobs `EXTRACT#<id>` (lib/tools/extraction.ts). Keys come from lib/store/keys.ts.
 */
const Counts = z.object({
  rows: z.number().int(),
  processed: z.number().int(),
  created: z.number().int(),
  updated: z.number().int(),
  unchanged: z.number().int(),
  failed: z.number().int(),
});
export type Counts = z.infer<typeof Counts>;

const JobItem = entity(
  'extraction job',
  z.object({
    id: z.string(),
    status: z.enum(['queued', 'running', 'succeeded', 'failed']),
    connection_id: z.string(),
    engine: z.string().nullable().default(null),
    source: z.record(z.string(), z.string()),
    name_prefix: z.string(),
    max_rows: z.number().int(),
    counts: Counts,
    truncated: z.boolean().default(false),
    errors: z.array(z.object({ row: z.number().int(), name: z.string().nullable(), error: z.string() })),
    error: z.string().nullable().default(null),
    principal: z.object({ kind: z.string(), id: z.string(), user: z.string().nullable(), scopes: z.array(z.string()) }),
    created_at: z.string(),
    started_at: z.string().nullable().default(null),
    finished_at: z.string().nullable().default(null),
    attempts: z.number().int().default(0),
  }),
);
export type Job = ReturnType<typeof JobItem.parse>;

/** A new job (never overwriting one), kept until `ttl`. */
export async function putJob(tenantId: string, id: string, job: Job, ttl: number): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...keys.extractionJob(tenantId, id), ...job, ttl },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
}

export async function readJob(tenantId: string, id: string): Promise<Job | undefined> {
  const res = await db().send(new GetCommand({ TableName: tableName(), Key: keys.extractionJob(tenantId, id), ConsistentRead: true }));
  return res.Item ? JobItem.parse(res.Item) : undefined;
}

export async function saveJob(tenantId: string, id: string, fields: Partial<Job>): Promise<void> {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const sets = Object.entries(fields).map(([k, v], i) => {
    names[`#f${i}`] = k;
    values[`:v${i}`] = v;
    return `#f${i} = :v${i}`;
  });
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.extractionJob(tenantId, id),
      UpdateExpression: `SET ${sets.join(', ')}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ConditionExpression: 'attribute_exists(pk)',
    }),
  );
}

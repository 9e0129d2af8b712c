import { mkdtempSync, rmSync } from 'node:fs';
import { PDFDocument } from '@cantoo/pdf-lib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CallContext } from '../../lib/auth/principal.js';
import { LOCAL_DOCUMENTS_BUCKET, type LocalS3, startLocalS3 } from '../../scripts/local/s3.js';
import { useRuntimeConfig } from '../helpers/in-process.js';
import { scaled } from '../helpers/timeouts.js';

/**
 * A crash in the middle of POST /api/v1/documents (lib/documents/upload.ts) leaves no sealed
 * object that the table does not name: the upload's intent is written before the object,
 * and the account's abandoned intents are swept (object, then intent). The crash is a commit
 * that never returns (the process stops there: nothing after it runs), against the suite's
 * table and a local S3 engine started for this file.
 */
const hang = { on: false };
vi.mock('../../lib/audit/audit.js', async (original) => {
  const real = await original<typeof import('../../lib/audit/audit.js')>();
  return { ...real, commit: (...args: Parameters<typeof real.commit>) => (hang.on ? new Promise<never>(() => undefined) : real.commit(...args)) };
});

let s3: LocalS3;
let dir: string;
let upload: typeof import('../../lib/documents/upload.js');
let storage: typeof import('../../lib/documents/storage.js');
let keys: typeof import('../../lib/store/keys.js').keys;
let queryAll: typeof import('../../lib/store/pagination.js').queryAll;

beforeAll(async () => {
  useRuntimeConfig();
  dir = mkdtempSync(join(tmpdir(), 'defects-upload-intent-'));
  s3 = await startLocalS3({ dataDir: dir, buckets: [LOCAL_DOCUMENTS_BUCKET] });
  Object.assign(process.env, { DOCUMENTS_BUCKET: LOCAL_DOCUMENTS_BUCKET, DOCUMENTS_S3_ENDPOINT: s3.endpoint });
  upload = await import('../../lib/documents/upload.js');
  storage = await import('../../lib/documents/storage.js');
  ({ keys } = await import('../../lib/store/keys.js'));
  ({ queryAll } = await import('../../lib/store/pagination.js'));
}, scaled(60_000));

afterAll(async () => {
  await s3?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

let PDF = '';
beforeAll(async () => {
  const doc = await PDFDocument.create();
  doc.addPage([200, 200]);
  PDF = Buffer.from(await doc.save()).toString('base64');
});

const ctx = (tenantId: string): CallContext => {
  const tenant = { id: tenantId, name: 't', admin_email: 'a@example.test', status: 'active', operator: false, quota: {}, created_at: '', updated_at: '' } as const;
  return { principal: { kind: 'api_key', tenantId, tenant, id: 'k', user: 'a@example.test', scopes: ['admin:*'], operator: false }, requestId: 'r', sourceIp: null, userAgent: null };
};
const body = () => ({ name: 'contract', description: '', content_type: 'application/pdf', content_base64: PDF, allow_download: true, allow_render: true }) as never;

const objectExists = (key: string) =>
  storage.getObject(key).then(
    () => true,
    (error: unknown) => ((error as Error).name === 'NoSuchKey' ? false : Promise.reject(error)),
  );
const intents = async (tenantId: string) => queryAll({ pk: keys.tenant(tenantId).pk, sk: { prefix: keys.documentUploadPrefix } });

/** The account's objects in the bucket. */
async function objectsOf(tenantId: string): Promise<string[]> {
  const { S3Client, ListObjectsV2Command } = await import('@aws-sdk/client-s3');
  const client = new S3Client({ region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const out = await client.send(new ListObjectsV2Command({ Bucket: LOCAL_DOCUMENTS_BUCKET, Prefix: `tenants/${tenantId}/` }));
  return (out.Contents ?? []).map((o) => o.Key!);
}

/** The account's objects that no item of its partition names (`object_key`): what nothing could ever find and remove. */
async function unrecorded(tenantId: string): Promise<string[]> {
  const named = new Set((await queryAll({ pk: keys.tenant(tenantId).pk })).map((i) => i.object_key));
  return (await objectsOf(tenantId)).filter((k) => !named.has(k));
}
const objectKeyOf = (tenantId: string, id: string) => storage.objectKey(tenantId, id, 1);

async function crashedUpload(tenantId: string): Promise<string> {
  hang.on = true;
  void upload.uploadDocument(ctx(tenantId), body());
  // the process "dies" once the object is stored and the commit has started
  for (let i = 0; i < 200 && (await objectsOf(tenantId)).length === 0; i++) await new Promise((r) => setTimeout(r, 25));
  hang.on = false;
  const [key] = await objectsOf(tenantId);
  expect(key, 'the upload stored its object').toBeDefined();
  expect(await unrecorded(tenantId), 'an object the table does not name').toEqual([]);
  return key!.split('/')[3]!;
}

describe('an upload that crashes between its object and its commit', () => {
  it('leaves an intent naming the object; the sweep removes the object and the intent once it is abandoned', async () => {
    const tenantId = randomUUID();
    const id = await crashedUpload(tenantId);
    const key = objectKeyOf(tenantId, id);
    expect(await objectExists(key)).toBe(true);
    // a young intent may be an upload still running: left alone
    expect(await upload.sweepAbandonedUploads(tenantId)).toBe(0);
    expect(await objectExists(key)).toBe(true);
    expect(await upload.sweepAbandonedUploads(tenantId, Date.now() + upload.ABANDONED_AFTER_MS + 1000)).toBe(1);
    expect(await objectExists(key)).toBe(false);
    expect(await intents(tenantId)).toEqual([]);
  });

  it('the account’s next upload sweeps it; a committed upload leaves no intent and its object stays', async () => {
    const tenantId = randomUUID();
    const id = await crashedUpload(tenantId);
    const stale = new Date(Date.now() - upload.ABANDONED_AFTER_MS - 1000).toISOString();
    const { UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
    const { db, tableName } = await import('../../lib/store/client.js');
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.documentUpload(tenantId, id),
        UpdateExpression: 'SET created_at = :t',
        ExpressionAttributeValues: { ':t': stale },
      }),
    );
    const done = await upload.uploadDocument(ctx(tenantId), body());
    expect(await objectExists(objectKeyOf(tenantId, id))).toBe(false);
    expect(await objectExists(objectKeyOf(tenantId, done.id))).toBe(true);
    expect(await intents(tenantId)).toEqual([]);
  });
});

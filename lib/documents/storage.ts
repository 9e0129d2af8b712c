import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { config } from '../config.js';
import { admitted } from '../core/admission.js';
import { serviceUnavailable } from '../core/errors.js';

/**
 * The documents bucket (S3 in AWS; the local S3-compatible engine in the embedded runtimes,
 * reached through DOCUMENTS_S3_ENDPOINT with path-style addressing): the same client code
 * everywhere. Objects hold a document already sealed with its tenant's envelope key
 * (lib/crypto/envelope.ts); the bucket adds SSE-KMS, versioning and TLS-only access.
 */
let client: S3Client | undefined;

function bucket(): { s3: S3Client; name: string } {
  const cfg = config();
  if (!cfg.DOCUMENTS_BUCKET) throw serviceUnavailable('document storage is not configured (DOCUMENTS_BUCKET)');
  client ??= new S3Client({
    region: cfg.AWS_REGION,
    ...(cfg.DOCUMENTS_S3_ENDPOINT
      ? { endpoint: cfg.DOCUMENTS_S3_ENDPOINT, forcePathStyle: true, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
      : {}),
  });
  return { s3: client, name: cfg.DOCUMENTS_BUCKET };
}

/** The object key of a document version: tenant first, like every table key. */
export const objectKey = (tenantId: string, id: string, version: number) => `tenants/${tenantId}/documents/${id}/v${version}`;

export async function putObject(key: string, body: Uint8Array): Promise<void> {
  const { s3, name } = bucket();
  await s3.send(new PutObjectCommand({ Bucket: name, Key: key, Body: body, ContentType: 'application/octet-stream' }));
}

export async function getObject(key: string): Promise<Uint8Array> {
  // a speculative read (GET) fetches the object only once the request is admitted (issue 32)
  await admitted();
  const { s3, name } = bucket();
  const out = await s3.send(new GetObjectCommand({ Bucket: name, Key: key }));
  return out.Body!.transformToByteArray();
}

export async function deleteObject(key: string): Promise<void> {
  const { s3, name } = bucket();
  await s3.send(new DeleteObjectCommand({ Bucket: name, Key: key }));
}

import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { config } from '../config.js';
import { admitted } from '../core/admission.js';
import { serviceUnavailable } from '../core/errors.js';
import { tenantCredentials } from '../tenancy/credentials.js';
import { currentScope, TenantScopeViolation } from '../tenancy/scope.js';

/**
 * The documents bucket (S3 in AWS; the local S3-compatible engine in the embedded runtimes,
 * reached through DOCUMENTS_S3_ENDPOINT with path-style addressing): the same client code
 * everywhere. Objects hold a document already sealed with its tenant's envelope key
 * (lib/crypto/envelope.ts); the bucket adds SSE-KMS, versioning and TLS-only access.
 *
 * Tenancy in IAM (issue 31): inside a tenant scope the client holds the tenant's STS session
 * (lib/tenancy/credentials.ts, as db() and the envelope's KMS client do), whose role reaches
 * only `tenants/${aws:PrincipalTag/tenant_id}/*` of the bucket, and the SSE-KMS key only
 * through S3 for this bucket (infra/grants.ts `TenantDocumentObjects`). The key of every call
 * is checked against the scope's tenant first, so a mistake is refused here, not only by AWS.
 */
let serviceClient: S3Client | undefined;
const tenantClients = new Map<string, S3Client>();
/** Clients kept per container (the oldest goes first), as lib/store/client.ts keeps its own. */
const MAX_TENANT_CLIENTS = 1000;

function newClient(tenantId: string | undefined): S3Client {
  const cfg = config();
  const local = cfg.DOCUMENTS_S3_ENDPOINT ? { endpoint: cfg.DOCUMENTS_S3_ENDPOINT, forcePathStyle: true } : {};
  if (tenantId !== undefined) return new S3Client({ region: cfg.AWS_REGION, ...local, credentials: () => tenantCredentials(tenantId) });
  return new S3Client({
    region: cfg.AWS_REGION,
    ...local,
    ...(cfg.DOCUMENTS_S3_ENDPOINT ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
  });
}

/** The client of the current scope for `key`: the scope's tenant's session once it is known, else the function's own. */
function bucket(key: string): { s3: S3Client; name: string } {
  const cfg = config();
  if (!cfg.DOCUMENTS_BUCKET) throw serviceUnavailable('document storage is not configured (DOCUMENTS_BUCKET)');
  const tenantId = currentScope()?.tenantId;
  if (tenantId !== undefined && !key.startsWith(`tenants/${tenantId}/`)) {
    throw new TenantScopeViolation(`a request of tenant ${tenantId} cannot reach another tenant's documents`);
  }
  if (tenantId === undefined || !cfg.TENANT_ROLE_ARN) return { s3: (serviceClient ??= newClient(undefined)), name: cfg.DOCUMENTS_BUCKET };
  let s3 = tenantClients.get(tenantId);
  if (!s3) {
    s3 = newClient(tenantId);
    if (tenantClients.size >= MAX_TENANT_CLIENTS) tenantClients.delete(tenantClients.keys().next().value as string);
    tenantClients.set(tenantId, s3);
  }
  return { s3, name: cfg.DOCUMENTS_BUCKET };
}

/** The object key of a document version: tenant first, like every table key. */
export const objectKey = (tenantId: string, id: string, version: number) => `tenants/${tenantId}/documents/${id}/v${version}`;

export async function putObject(key: string, body: Uint8Array): Promise<void> {
  const { s3, name } = bucket(key);
  await s3.send(new PutObjectCommand({ Bucket: name, Key: key, Body: body, ContentType: 'application/octet-stream' }));
}

export async function getObject(key: string): Promise<Uint8Array> {
  // a speculative read (GET) fetches the object only once the request is admitted (issue 32)
  await admitted();
  const { s3, name } = bucket(key);
  const out = await s3.send(new GetObjectCommand({ Bucket: name, Key: key }));
  return out.Body!.transformToByteArray();
}

export async function deleteObject(key: string): Promise<void> {
  const { s3, name } = bucket(key);
  await s3.send(new DeleteObjectCommand({ Bucket: name, Key: key }));
}

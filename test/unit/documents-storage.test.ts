import { afterEach, describe, expect, it, vi } from 'vitest';

/**
 * lib/documents/storage.ts without a bucket: the document routes answer 503 with what is
 * missing rather than failing inside the S3 client; object keys start with the tenant.
 */
const saved = { ...process.env };
afterEach(() => {
  for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
  Object.assign(process.env, saved);
  vi.resetModules();
});

describe('documents storage', () => {
  it('is unavailable (503) until DOCUMENTS_BUCKET is configured', async () => {
    delete process.env.DOCUMENTS_BUCKET;
    delete process.env.DOCUMENTS_S3_ENDPOINT;
    Object.assign(process.env, { KEY_PROVIDER: 'local', LOCAL_MASTER_KEY_FILE: '/nonexistent' });
    vi.resetModules();
    const storage = await import('../../lib/documents/storage.js');
    for (const call of [() => storage.getObject('k'), () => storage.putObject('k', new Uint8Array(1)), () => storage.deleteObject('k')]) {
      await expect(call()).rejects.toMatchObject({ status: 503, code: 'service_unavailable', message: expect.stringContaining('DOCUMENTS_BUCKET') });
    }
    expect(storage.objectKey('t1', 'd1', 3)).toBe('tenants/t1/documents/d1/v3');
  });
});

describe("documents storage in a tenant scope (issue 31: documents confined by the tenant session's tag)", () => {
  /** A stand-in S3 endpoint that records the access key id each request was signed with, and the path. */
  async function recordingS3() {
    const { createServer } = await import('node:http');
    const seen: { method: string; path: string; accessKeyId: string }[] = [];
    const server = createServer((req, res) => {
      const accessKeyId = / Credential=([^/]+)\//.exec(req.headers.authorization ?? '')?.[1] ?? '';
      seen.push({ method: req.method!, path: req.url!, accessKeyId });
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.end(req.method === 'GET' ? 'sealed' : '');
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    const port = (server.address() as import('node:net').AddressInfo).port;
    return { endpoint: `http://127.0.0.1:${port}`, seen, close: () => new Promise<void>((ok) => server.close(() => ok())) };
  }

  async function load(endpoint: string) {
    Object.assign(process.env, {
      KEY_PROVIDER: 'local',
      LOCAL_MASTER_KEY_FILE: '/nonexistent',
      DOCUMENTS_BUCKET: 'docs',
      DOCUMENTS_S3_ENDPOINT: endpoint,
      TENANT_ROLE_ARN: 'arn:aws:iam::111122223333:role/tenant-access',
    });
    vi.resetModules();
    // the tenant's STS session (lib/tenancy/credentials.ts), named after its tenant
    vi.doMock('../../lib/tenancy/credentials.js', () => ({
      tenantCredentials: async (tenantId: string) => ({
        accessKeyId: `ASIA-${tenantId}`,
        secretAccessKey: 's',
        sessionToken: `local-session-${tenantId}`,
        expiration: new Date(Date.now() + 900_000),
      }),
    }));
    const [storage, scope] = await Promise.all([import('../../lib/documents/storage.js'), import('../../lib/tenancy/scope.js')]);
    return { storage, scope };
  }

  it("every object call of a tenant scope is signed with that tenant's session, not the function's role", async () => {
    const s3 = await recordingS3();
    try {
      const { storage, scope } = await load(s3.endpoint);
      const key = storage.objectKey('t1', 'd1', 1);
      await scope.withTenant('t1', async () => {
        await storage.putObject(key, new Uint8Array([1]));
        expect(Buffer.from(await storage.getObject(key)).toString()).toBe('sealed');
        await storage.deleteObject(key);
      });
      expect(s3.seen.map((r) => [r.method, r.path.split('?')[0], r.accessKeyId])).toEqual([
        ['PUT', '/docs/tenants/t1/documents/d1/v1', 'ASIA-t1'],
        ['GET', '/docs/tenants/t1/documents/d1/v1', 'ASIA-t1'],
        ['DELETE', '/docs/tenants/t1/documents/d1/v1', 'ASIA-t1'],
      ]);
    } finally {
      vi.doUnmock('../../lib/tenancy/credentials.js');
      await s3.close();
    }
  });

  it('a key of another tenant is refused in the scope before any request leaves', async () => {
    const s3 = await recordingS3();
    try {
      const { storage, scope } = await load(s3.endpoint);
      const theirs = storage.objectKey('t2', 'd1', 1);
      await scope.withTenant('t1', async () => {
        for (const call of [
          () => storage.getObject(theirs),
          () => storage.putObject(theirs, new Uint8Array(1)),
          () => storage.deleteObject(theirs),
        ]) {
          await expect(call()).rejects.toThrow(scope.TenantScopeViolation);
        }
        // a prefix that only starts like the tenant's id is another tenant's
        await expect(storage.getObject('tenants/t10/documents/d1/v1')).rejects.toThrow(scope.TenantScopeViolation);
      });
      expect(s3.seen).toEqual([]);
    } finally {
      vi.doUnmock('../../lib/tenancy/credentials.js');
      await s3.close();
    }
  });
});

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

import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, describe, expect, it } from 'vitest';
import { directoryPublisher, s3Publisher } from '../../lib/certificates/publish.js';

/**
 * lib/certificates/publish.ts: the two places a CA's CRL and certificate are published.
 * S3 has no local engine here, so its client is mocked and the exact request asserted; the
 * directory publisher writes real files.
 */
const dir = mkdtempSync(join(tmpdir(), 'pki-publish-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('PKI publishers', () => {
  it('S3: one PutObject per file, under the prefix, with its content type and public caching', async () => {
    const s3 = mockClient(S3Client);
    s3.on(PutObjectCommand).resolves({});
    const body = new Uint8Array([0x30, 0x82, 0x01]);
    await s3Publisher(new S3Client({ region: 'eu-west-1' }), 'pki-bucket', 'pki/').put({
      name: 'ca-1.crl',
      body,
      contentType: 'application/pkix-crl',
    });
    const calls = s3.commandCalls(PutObjectCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.args[0].input).toEqual({
      Bucket: 'pki-bucket',
      Key: 'pki/ca-1.crl',
      Body: body,
      ContentType: 'application/pkix-crl',
      CacheControl: 'public, max-age=3600',
    });
    s3.restore();
  });

  it('a directory: the file replaced whole, no temporary file left', async () => {
    const p = directoryPublisher(join(dir, 'pki'));
    await p.put({ name: 'ca-2.crt', body: Buffer.from('one'), contentType: 'application/pkix-cert' });
    await p.put({ name: 'ca-2.crt', body: Buffer.from('two'), contentType: 'application/pkix-cert' });
    expect(readFileSync(join(dir, 'pki', 'ca-2.crt'), 'utf8')).toBe('two');
    expect(readdirSync(join(dir, 'pki'))).toEqual(['ca-2.crt']);
  });
});

import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { config } from '../config.js';

/**
 * Publication of each account CA's revocation data where relying parties can fetch it
 * without credentials, as AWS Private CA does: `<ca id>.crl` (the CRL, DER,
 * application/pkix-crl) and `<ca id>.crt` (the intermediate certificate, DER,
 * application/pkix-cert) under PKI_PUBLIC_BASE_URL. In AWS the files are objects in
 * PKI_PUBLISH_BUCKET (under PKI_PUBLISH_PREFIX); in the local runtime they are files in
 * PKI_PUBLISH_DIR, which the local gateway serves at /pki/. Issued certificates name both
 * URLs (lib/certificates/ca.ts), and the CRL is re-published on every revocation.
 */
interface PkiFile {
  readonly name: string;
  readonly body: Uint8Array;
  readonly contentType: 'application/pkix-crl' | 'application/pkix-cert';
}

interface PkiPublisher {
  put(file: PkiFile): Promise<void>;
}

/** A directory (the local runtime): written atomically, so the gateway never serves half a file. */
export function directoryPublisher(dir: string): PkiPublisher {
  return {
    async put(file) {
      await mkdir(dir, { recursive: true });
      const tmp = join(dir, `.${file.name}.${process.pid}.tmp`);
      await writeFile(tmp, file.body);
      await rename(tmp, join(dir, file.name));
    },
  };
}

/** An S3 bucket (AWS): one PutObject per file, cacheable for an hour by relying parties. */
export function s3Publisher(client: S3Client, bucket: string, prefix: string): PkiPublisher {
  return {
    async put(file) {
      const { PutObjectCommand } = await import('@aws-sdk/client-s3');
      await client.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: `${prefix}${file.name}`,
          Body: file.body,
          ContentType: file.contentType,
          CacheControl: 'public, max-age=3600',
        }),
      );
    },
  };
}

let publisher: PkiPublisher | null | undefined;

/** The configured publisher; null when the deployment publishes nothing (PKI_PUBLIC_BASE_URL unset). */
export async function pkiPublisher(): Promise<PkiPublisher | null> {
  if (publisher === undefined) {
    const cfg = config();
    if (!cfg.PKI_PUBLIC_BASE_URL) publisher = null;
    else if (cfg.PKI_PUBLISH_DIR) publisher = directoryPublisher(cfg.PKI_PUBLISH_DIR);
    else if (cfg.PKI_PUBLISH_BUCKET) {
      const { S3Client: Client } = await import('@aws-sdk/client-s3');
      publisher = s3Publisher(new Client({ region: cfg.AWS_REGION }), cfg.PKI_PUBLISH_BUCKET, cfg.PKI_PUBLISH_PREFIX);
    } else throw new Error('PKI_PUBLIC_BASE_URL needs PKI_PUBLISH_BUCKET or PKI_PUBLISH_DIR');
  }
  return publisher;
}

/** Where a CA's files are fetched; undefined when nothing is published. */
export function pkiUrls(caId: string): { crl: string; issuer: string } | undefined {
  const base = config().PKI_PUBLIC_BASE_URL?.replace(/\/+$/, '');
  return base ? { crl: `${base}/${caId}.crl`, issuer: `${base}/${caId}.crt` } : undefined;
}

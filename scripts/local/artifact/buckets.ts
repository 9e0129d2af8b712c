/**
 * The deployment's S3 buckets on the local S3 engine (scripts/local/s3.ts): each
 * AWS::S3::Bucket of the templates is created under the name CloudFormation would give it
 * (lower-case, from its logical path), its Ref and Arn resolve to it, and a function whose
 * environment names one of them reaches the engine through DOCUMENTS_S3_ENDPOINT, the one
 * endpoint override lib/config.ts knows for S3.
 */
import { startLocalS3 } from '../s3.js';

export interface Buckets {
  /** Bucket name by the bucket's logical path. */
  readonly names: ReadonlyMap<string, string>;
  /** The endpoint variables of a function whose environment names a bucket. */
  overlay(environment: Readonly<Record<string, string>>): Record<string, string>;
  stop(): Promise<void>;
}

/** A valid bucket name (3-63 lower-case letters, digits, hyphens) from a logical path. */
export const bucketName = (key: string) =>
  key
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(-63)
    .replace(/^-+/, '');

export async function startBuckets(keys: readonly string[], dataDir: string): Promise<Buckets> {
  const names = new Map(keys.map((k) => [k, bucketName(k)]));
  const s3 = await startLocalS3({ dataDir, buckets: [...names.values()] });
  const known = new Set(names.values());
  return {
    names,
    overlay: (environment): Record<string, string> =>
      Object.values(environment).some((v) => known.has(v)) ? { DOCUMENTS_S3_ENDPOINT: s3.endpoint } : {},
    stop: () => s3.stop(),
  };
}

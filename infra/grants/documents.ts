import { Aws } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type { Grant } from '../../lib/routes.js';
import type { Acknowledgment } from './common.js';

export const usesDocuments = (grants: readonly Grant[]): boolean => grants.includes('documents:read') || grants.includes('documents:write');

/**
 * The documents bucket's objects under `prefix` (a tenant-access role: the session's own
 * `tenants/${aws:PrincipalTag/tenant_id}/*`), and the bucket's SSE-KMS key only through S3 for
 * this bucket: S3 calls KMS with the caller's credentials, so the role that signs the object
 * request is the one that needs the key (bucket keys: the context is the bucket's ARN).
 */
export function documentStatements(grants: readonly Grant[], bucketArn: string, prefix: string, key: kms.IKey, sidPrefix: string): iam.PolicyStatement[] {
  if (!usesDocuments(grants)) return [];
  const write = grants.includes('documents:write');
  return [
    new iam.PolicyStatement({
      sid: `${sidPrefix}DocumentObjects`,
      actions: write ? ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'] : ['s3:GetObject'],
      resources: [`${bucketArn}/${prefix}`],
    }),
    // SSE-KMS under the envelope key, only through S3 for this bucket (bucket key context)
    new iam.PolicyStatement({
      sid: `${sidPrefix}DocumentObjectsKey`,
      actions: write ? ['kms:GenerateDataKey', 'kms:Decrypt'] : ['kms:Decrypt'],
      resources: [key.keyArn],
      conditions: {
        StringEquals: { 'kms:ViaService': `s3.${Aws.REGION}.${Aws.URL_SUFFIX}`, 'kms:EncryptionContext:aws:s3:arn': bucketArn },
      },
    }),
  ];
}

/** The cdk-nag acknowledgment of the object wildcard: on a function's own role (`tenants/*`) or a tenant-access role (the session's prefix). */
export function documentsAcknowledgment(name: string, tenant: boolean): Acknowledgment {
  const bucket = `arn:<AWS::Partition>:s3:::${name}-documents-<AWS::AccountId>-<AWS::Region>`;
  return tenant
    ? {
        id: `AwsSolutions-IAM5[Resource::${bucket}/tenants/<aws:PrincipalTag/tenant_id>/*]`,
        reason: 'Documents are objects under tenants/<tenant>/documents/<id>/v<n>, created at run time; a tenant session reaches only its own tenant\'s prefix (the session tag in the resource), and each object is sealed with its tenant\'s data key.',
      }
    : {
        id: `AwsSolutions-IAM5[Resource::${bucket}/tenants/*]`,
        reason: 'Documents are objects under tenants/<tenant>/documents/<id>/v<n>, created at run time; the functions reach only that prefix of the one documents bucket, and each object is sealed with its own tenant\'s data key.',
      };
}

import { Aws } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import { AUDIT_KEY_PURPOSE } from '../../lib/audit/queue-key.js';
import type { Grant } from '../../lib/routes.js';
import { TENANT_SESSION_PURPOSE } from '../../lib/tenancy/credentials.js';
import { holds, TENANT_TAG } from './common.js';

/**
 * The envelope key's data keys for `kms:decrypt` / `kms:encrypt`. On a tenant-access role
 * (`tenant`): only with the encryption context `tenant_id` = the session's tag. On a
 * function's own role (operator, self-authenticating, cross-account workers): any context that
 * carries a `tenant_id` (lib/crypto/envelope.ts always passes it; without it the key is
 * unusable, so these grants cannot open the queues' data keys, whose context is the queue
 * ARN), with the key's metadata.
 */
export function dataKeyStatements(grants: readonly Grant[], key: kms.IKey, tenant: boolean): iam.PolicyStatement[] {
  const has = holds(grants);
  if (!has('kms:decrypt') && !has('kms:encrypt')) return [];
  const actions = has('kms:encrypt') ? ['kms:Decrypt', 'kms:GenerateDataKey'] : ['kms:Decrypt'];
  if (tenant) {
    return [new iam.PolicyStatement({ sid: 'TenantDataKeys', actions, resources: [key.keyArn], conditions: { StringEquals: { 'kms:EncryptionContext:tenant_id': TENANT_TAG } } })];
  }
  return [
    new iam.PolicyStatement({ sid: 'TenantDataKeys', actions, resources: [key.keyArn], conditions: { Null: { 'kms:EncryptionContext:tenant_id': 'false' } } }),
    new iam.PolicyStatement({ sid: 'KeyMetadata', actions: ['kms:DescribeKey'], resources: [key.keyArn] }),
  ];
}

/** `kms:describe`: the envelope key's metadata (GET /ready). */
export function keyDescribeStatements(grants: readonly Grant[], key: kms.IKey): iam.PolicyStatement[] {
  return grants.includes('kms:describe') ? [new iam.PolicyStatement({ sid: 'KeyDescribe', actions: ['kms:DescribeKey'], resources: [key.keyArn] })] : [];
}

/**
 * The audit queue's MAC key (lib/audit/queue-key.ts): `action` on the envelope key only with
 * the encryption context `{tenant_id: <tenant>, purpose: "audit-queue"}`, exactly those two
 * keys. `tenant` is the session's tag on a tenant-access role; undefined (any account, the key
 * still present) on the own role of an operator or self-authenticating read-only route.
 */
export function auditKeyStatement(sid: string, action: 'kms:GenerateDataKey' | 'kms:Decrypt', key: kms.IKey, tenant: string | undefined): iam.PolicyStatement {
  return new iam.PolicyStatement({
    sid,
    actions: [action],
    resources: [key.keyArn],
    conditions: {
      StringEquals: { 'kms:EncryptionContext:purpose': AUDIT_KEY_PURPOSE, ...(tenant ? { 'kms:EncryptionContext:tenant_id': tenant } : {}) },
      'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': ['tenant_id', 'purpose'] },
      Null: { 'kms:EncryptionContext:tenant_id': 'false' },
    },
  });
}

/** The sealed shared sessions' key (lib/authn/tenant-sessions.ts): only under this tenant-access role's context. */
export function tenantSessionKeyStatement(key: kms.IKey, tenantRoleName: string): iam.PolicyStatement {
  return new iam.PolicyStatement({
    sid: 'TenantSessionKey',
    actions: ['kms:GenerateDataKey', 'kms:Decrypt'],
    resources: [key.keyArn],
    conditions: { StringEquals: { 'kms:EncryptionContext:purpose': TENANT_SESSION_PURPOSE, 'kms:EncryptionContext:tenant_role': tenantRoleName } },
  });
}

/**
 * The grant for lib/signing/kms.ts (AWS KMS asymmetric signing keys). lib/routes.ts does not
 * declare it yet, so functions run with SIGNING_KMS_ENABLED=0 and signing in AWS is
 * CloudHSM's; routes that declare `kms:sign` get these permissions and the backend enabled.
 */
export const KMS_SIGN_GRANT = 'kms:sign';

export const usesKmsSigning = (grants: readonly string[]): boolean => grants.includes(KMS_SIGN_GRANT);

/** `kms:sign`: creating and using the tenants' signing keys, never the envelope key. */
export function kmsSigningStatements(grants: readonly string[]): iam.PolicyStatement[] {
  if (!usesKmsSigning(grants)) return [];
  return [
    // CreateKey names no key yet: AWS requires Resource "*"; bounded to signing keys that
    // carry the tenant tag lib/signing/kms.ts sets.
    new iam.PolicyStatement({
      sid: 'KmsSigningKeyCreate',
      actions: ['kms:CreateKey', 'kms:TagResource'],
      resources: ['*'],
      conditions: {
        StringEquals: { 'kms:KeyUsage': 'SIGN_VERIFY' },
        Null: { 'aws:RequestTag/tenant_id': 'false' },
      },
    }),
    // only keys this service created (tagged with a tenant), never the envelope key
    new iam.PolicyStatement({
      sid: 'KmsSigningKeyUse',
      actions: ['kms:Sign', 'kms:GetPublicKey', 'kms:ScheduleKeyDeletion'],
      resources: [`arn:${Aws.PARTITION}:kms:${Aws.REGION}:${Aws.ACCOUNT_ID}:key/*`],
      conditions: { Null: { 'aws:ResourceTag/tenant_id': 'false' } },
    }),
  ];
}

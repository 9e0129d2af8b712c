import { Aws } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Grant } from '../../lib/routes.js';
import { keys, meterPk } from '../../lib/store/keys.js';
import { ownerMark } from '../../lib/tenancy/lookups.js';
import { documentsBucketName } from '../naming.js';

/** What the roles' statements name: the data stack's table, envelope key and queues. */
export interface RoleTargets {
  readonly table: dynamodb.ITable;
  readonly key: kms.IKey;
  readonly queue: sqs.IQueue;
  readonly deadLetterQueue: sqs.IQueue;
  readonly jobsQueue: sqs.IQueue;
  readonly jobsDeadLetterQueue: sqs.IQueue;
  readonly auditQueue: sqs.IQueue;
  readonly auditDeadLetterQueue: sqs.IQueue;
}

/** Execution and tenant-access role of a tenant route's grant set (or of a worker that acts for one account at a time). */
export interface TenantRoles {
  readonly execution: iam.Role;
  readonly tenant: iam.Role;
}

/** A cdk-nag finding acknowledged on a role, with the reason (infra/nag.ts). */
export interface Acknowledgment {
  readonly id: string;
  readonly reason: string;
}

/** Whether a grant set holds `grant`. */
export const holds =
  (grants: readonly Grant[]) =>
  (grant: Grant): boolean =>
    grants.includes(grant);

/** The session's tenant, as the tenant-access roles' conditions name it. */
export const TENANT_TAG = '${aws:PrincipalTag/tenant_id}';
/** The partition key condition of the tenant-access role: the session's own account only. */
export const TENANT_PARTITION = 'T#${aws:PrincipalTag/tenant_id}';
/**
 * The account's metering partition (usage and rate-limit buckets): the only partition
 * `TenantMeter` writes, and one `TenantRead` reads.
 */
export const METER_PARTITION = meterPk('${aws:PrincipalTag/tenant_id}');
/** Every metering partition: the accounts' (usage, rate-limit buckets) and the per-IP rate-limit items (`TableMeter`). */
export const METERING_PARTITIONS = [meterPk('*'), keys.ipRate('*').pk] as const;
/** Credential items authentication looks up by hash or id before it knows the account (lib/store/keys.ts). */
export const CREDENTIAL_PARTITIONS = ['KEY#*', 'APITOKEN#*', 'DEVICE#*'] as const;
/** The session's own owner mark on lookup items (lib/tenancy/lookups.ts `ownerMark`). */
export const OWN_MARK = ownerMark('${aws:PrincipalTag/tenant_id}');
/**
 * The attribute names a tenant session's lookup write may name (StringLike): its own mark, or
 * any name starting with a lower-case letter (every attribute the code writes does; the
 * marks start with `T#`), so no other account's mark.
 */
export const LOOKUP_ITEM_ATTRIBUTES = [OWN_MARK, ...Array.from('abcdefghijklmnopqrstuvwxyz', (c) => `${c}*`)] as const;

/** The documents bucket's ARN (infra/naming.ts). */
export const documentsBucketArn = (name: string): string => `arn:${Aws.PARTITION}:s3:::${documentsBucketName(name)}`;

/** Every route function's log group: /aws/lambda/<name>-<route> (infra/naming.ts). */
export function logGroupArnPattern(name: string): string {
  return `arn:${Aws.PARTITION}:logs:${Aws.REGION}:${Aws.ACCOUNT_ID}:log-group:/aws/lambda/${name}-*:*`;
}

import { Aws } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { acknowledge } from './nag.js';
import { Construct } from 'constructs';
import { GRANTS, type Grant, type Route } from '../lib/routes.js';
import { TABLE_KEYS } from '../lib/store/keys.js';
import { documentsBucketName } from './naming.js';
import { hsmConfigured, type Settings } from './settings.js';

/**
 * Least privilege from the route table: each route declares what it touches (Route.grants,
 * see lib/routes.ts), and every distinct grant set gets ONE role shared by all functions with
 * exactly that set. No function can do more than its routes need, and 322 functions need only
 * a handful of roles (CloudFormation resources are the scarce thing here).
 *
 * | grant        | actions                                                                  | resource |
 * |--------------|--------------------------------------------------------------------------|----------|
 * | (every role) | logs:CreateLogStream, logs:PutLogEvents                                  | /aws/lambda/<name>-* log groups |
 * | (every role) | xray:PutTraceSegments, xray:PutTelemetryRecords (added by Tracing.ACTIVE)| * (X-Ray has no resource ARNs) |
 * | table:read   | dynamodb:GetItem, BatchGetItem, Query                                    | the table and its gsi1 index (by name) |
 * | table:meter  | dynamodb:UpdateItem                                                      | the table |
 * | table:write  | table:read + PutItem, UpdateItem, DeleteItem, ConditionCheckItem         | the table (TransactWriteItems is authorized per item action) |
 * | kms:decrypt  | kms:Decrypt only with an encryption context carrying tenant_id; kms:DescribeKey | the envelope key |
 * | kms:encrypt  | kms:decrypt + kms:GenerateDataKey (same context condition)               | the envelope key |
 * | jobs:send    | sqs:SendMessage; kms:GenerateDataKey + kms:Decrypt only via SQS for this queue | the jobs queue / the key |
 * | queue:send   | sqs:SendMessage; kms:GenerateDataKey + kms:Decrypt only via SQS for this queue | the webhook queue / the key |
 * | hsm          | ec2 network-interface actions Lambda needs in a VPC; cloudhsm:DescribeClusters; secretsmanager:GetSecretValue | * (ENI actions and DescribeClusters take no resource ARN) / the PIN secret |
 * | hsm:describe | cloudhsm:DescribeClusters                                                | * |
 * | payment      | secretsmanager:GetSecretValue (only when context paymentSecretArn is set)   | the payment provider's secret |
 * | documents:read  | s3:GetObject; kms:Decrypt only via S3 for this bucket (SSE-KMS)        | the documents bucket's objects / the key |
 * | documents:write | documents:read + s3:PutObject, s3:DeleteObject; kms:GenerateDataKey via S3 | the documents bucket's objects / the key |
 * | kms:sign     | (not in lib/routes.ts yet) kms:CreateKey+TagResource for SIGN_VERIFY keys tagged tenant_id; Sign, GetPublicKey, ScheduleKeyDeletion on keys tagged tenant_id | * / key/* |
 */
export function grantSetKey(grants: readonly Grant[]): string {
  return [...grants].sort((a, b) => GRANTS.indexOf(a) - GRANTS.indexOf(b)).join(' ') || 'none';
}

export interface RoleTargets {
  readonly table: dynamodb.ITable;
  readonly key: kms.IKey;
  readonly queue: sqs.IQueue;
  readonly deadLetterQueue: sqs.IQueue;
  readonly jobsQueue: sqs.IQueue;
  readonly jobsDeadLetterQueue: sqs.IQueue;
}

export class RouteRoles extends Construct {
  private readonly roles = new Map<string, iam.Role>();

  constructor(scope: Construct, id: string, private readonly props: { routes: readonly Route[]; targets: RoleTargets; settings: Settings }) {
    super(scope, id);
    for (const route of props.routes) this.roleFor(route);
  }

  /** All roles by grant-set key. */
  get all(): ReadonlyMap<string, iam.Role> {
    return this.roles;
  }

  roleFor(route: Route): iam.Role {
    const key = grantSetKey(route.grants);
    let role = this.roles.get(key);
    if (!role) {
      role = this.create(key, route.grants);
      this.roles.set(key, role);
    }
    return role;
  }

  private create(key: string, grants: readonly Grant[]): iam.Role {
    const { targets, settings } = this.props;
    const id = key === 'none' ? 'NoGrants' : key.split(' ').map((g) => g.split(/[^a-z]/).map((w) => w[0]!.toUpperCase() + w.slice(1)).join('')).join('');
    return grantedRole(this, id, `${settings.name} route functions with grants: ${key}`, grants, targets, settings);
  }
}

/**
 * A Lambda execution role allowed exactly `grants` (plus `extra` statements), its inline
 * policy a child of the role (so a function that depends on the role waits for it), with the
 * cdk-nag acknowledgments its unavoidable wildcards need.
 */
export function grantedRole(
  scope: Construct,
  id: string,
  description: string,
  grants: readonly Grant[],
  targets: RoleTargets,
  settings: Settings,
  extra: readonly iam.PolicyStatement[] = [],
): iam.Role {
  const role = new iam.Role(scope, id, { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'), description });
  const { statements, acknowledgments } = grantStatements(grants, targets, settings);
  role.attachInlinePolicy(new iam.Policy(role, 'Grants', { statements: [...statements, ...extra] }));
  acknowledge(role, acknowledgments);
  return role;
}

/** The statements of a grant set (the table at the top of this file). */
export function grantStatements(
  grants: readonly Grant[],
  targets: RoleTargets,
  settings: Settings,
): { statements: iam.PolicyStatement[]; acknowledgments: { id: string; reason: string }[] } {
  const has = (g: Grant) => grants.includes(g);
  const statements: iam.PolicyStatement[] = [
    new iam.PolicyStatement({ sid: 'Logs', actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [logGroupArnPattern(settings.name)] }),
  ];
  const tableArn = targets.table.tableArn;
  const indexArn = `${tableArn}/index/${TABLE_KEYS.gsi1.name}`;
  const reads = has('table:read') || has('table:write');
  if (reads) {
    statements.push(new iam.PolicyStatement({ sid: 'TableRead', actions: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'], resources: [tableArn] }));
    statements.push(new iam.PolicyStatement({ sid: 'IndexRead', actions: ['dynamodb:Query'], resources: [indexArn] }));
  }
  if (has('table:write')) {
    statements.push(
      new iam.PolicyStatement({
        sid: 'TableWrite',
        actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:ConditionCheckItem'],
        resources: [tableArn],
      }),
    );
  } else if (has('table:meter')) {
    statements.push(new iam.PolicyStatement({ sid: 'TableMeter', actions: ['dynamodb:UpdateItem'], resources: [tableArn] }));
  }
  if (has('kms:decrypt') || has('kms:encrypt')) {
    statements.push(
      new iam.PolicyStatement({
        sid: 'TenantDataKeys',
        actions: has('kms:encrypt') ? ['kms:Decrypt', 'kms:GenerateDataKey'] : ['kms:Decrypt'],
        resources: [targets.key.keyArn],
        // lib/crypto/envelope.ts always passes {tenant_id}; without it the key is unusable
        // (so these grants cannot open the queues' data keys, whose context is the queue ARN).
        conditions: { Null: { 'kms:EncryptionContext:tenant_id': 'false' } },
      }),
      new iam.PolicyStatement({ sid: 'KeyMetadata', actions: ['kms:DescribeKey'], resources: [targets.key.keyArn] }),
    );
  }
  if (has('queue:send')) {
    statements.push(
      new iam.PolicyStatement({ sid: 'QueueSend', actions: ['sqs:SendMessage'], resources: [targets.queue.queueArn] }),
      new iam.PolicyStatement({
        sid: 'QueueKey',
        actions: ['kms:GenerateDataKey', 'kms:Decrypt'],
        resources: [targets.key.keyArn],
        conditions: {
          StringEquals: {
            'kms:ViaService': `sqs.${Aws.REGION}.${Aws.URL_SUFFIX}`,
            'kms:EncryptionContext:aws:sqs:arn': targets.queue.queueArn,
          },
        },
      }),
    );
  }
  const documents = has('documents:read') || has('documents:write');
  const bucketArn = `arn:${Aws.PARTITION}:s3:::${documentsBucketName(settings.name)}`;
  if (documents) {
    const write = has('documents:write');
    statements.push(
      new iam.PolicyStatement({
        sid: 'DocumentObjects',
        actions: write ? ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'] : ['s3:GetObject'],
        resources: [`${bucketArn}/tenants/*`],
      }),
      // SSE-KMS under the envelope key, only through S3 for this bucket (bucket key context)
      new iam.PolicyStatement({
        sid: 'DocumentObjectsKey',
        actions: write ? ['kms:GenerateDataKey', 'kms:Decrypt'] : ['kms:Decrypt'],
        resources: [targets.key.keyArn],
        conditions: {
          StringEquals: { 'kms:ViaService': `s3.${Aws.REGION}.${Aws.URL_SUFFIX}`, 'kms:EncryptionContext:aws:s3:arn': bucketArn },
        },
      }),
    );
  }
  if (has('jobs:send')) {
    statements.push(
      new iam.PolicyStatement({ sid: 'JobsSend', actions: ['sqs:SendMessage'], resources: [targets.jobsQueue.queueArn] }),
      new iam.PolicyStatement({
        sid: 'JobsKey',
        actions: ['kms:GenerateDataKey', 'kms:Decrypt'],
        resources: [targets.key.keyArn],
        conditions: {
          StringEquals: {
            'kms:ViaService': `sqs.${Aws.REGION}.${Aws.URL_SUFFIX}`,
            'kms:EncryptionContext:aws:sqs:arn': targets.jobsQueue.queueArn,
          },
        },
      }),
    );
  }
  const acknowledgments: { id: string; reason: string }[] = [
    {
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:/aws/lambda/${settings.name}-*:*]`,
      reason: 'Functions write only to their own log groups, all named /aws/lambda/<name>-<route>; one pattern instead of one ARN per function keeps the shared role under the policy size limit.',
    },
    {
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'X-Ray PutTraceSegments/PutTelemetryRecords do not support resource-level permissions; AWS requires Resource "*".',
    },
  ];
  if (documents) {
    acknowledgments.push({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::${settings.name}-documents-<AWS::AccountId>-<AWS::Region>/tenants/*]`,
      reason: 'Documents are objects under tenants/<tenant>/documents/<id>/v<n>, created at run time; the functions reach only that prefix of the one documents bucket, and each object is sealed with its own tenant\'s data key.',
    });
  }
  if (has('hsm') && hsmConfigured(settings.hsm)) {
    statements.push(
      new iam.PolicyStatement({
        sid: 'VpcNetworkInterfaces',
        actions: [
          'ec2:CreateNetworkInterface',
          'ec2:DescribeNetworkInterfaces',
          'ec2:DescribeSubnets',
          'ec2:DeleteNetworkInterface',
          'ec2:AssignPrivateIpAddresses',
          'ec2:UnassignPrivateIpAddresses',
        ],
        resources: ['*'],
      }),
    );
    acknowledgments[1] = {
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Resource "*" is required by AWS for X-Ray PutTraceSegments/PutTelemetryRecords and for the EC2 network-interface actions Lambda performs to place a function in the CloudHSM VPC (the same actions as AWSLambdaVPCAccessExecutionRole); only the signing role has the latter.',
    };
  }
  if ((has('hsm') || has('hsm:describe')) && hsmConfigured(settings.hsm)) {
    // lib/signing/cloudhsm.ts: the cluster's HSM addresses (signing) or state (describing)
    statements.push(new iam.PolicyStatement({ sid: 'HsmCluster', actions: ['cloudhsm:DescribeClusters'], resources: ['*'] }));
    acknowledgments[1] = {
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: `${acknowledgments[1]!.reason} cloudhsm:DescribeClusters (the cluster's HSM addresses and state) supports no resource-level permissions, so AWS requires Resource "*" too.`,
    };
  }
  if (has('hsm') && settings.hsm.pinSecretArn) {
    statements.push(new iam.PolicyStatement({ sid: 'HsmPin', actions: ['secretsmanager:GetSecretValue'], resources: [settings.hsm.pinSecretArn] }));
  }
  if (has('payment') && settings.paymentSecretArn) {
    statements.push(new iam.PolicyStatement({ sid: 'PaymentSecret', actions: ['secretsmanager:GetSecretValue'], resources: [settings.paymentSecretArn] }));
  }
  if (usesKmsSigning(grants)) {
    statements.push(
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
    );
    acknowledgments.push({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:kms:<AWS::Region>:<AWS::AccountId>:key/*]`,
      reason: 'Tenants\' KMS signing keys are created at run time; the statement is bounded by the tenant_id tag condition, so only keys this service created can be used.',
    });
    acknowledgments[1] = {
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: `${acknowledgments[1]!.reason} kms:CreateKey/TagResource name no key yet, so AWS requires Resource "*" too (conditioned on SIGN_VERIFY keys with a tenant_id tag).`,
    };
  }
  return { statements, acknowledgments };
}

/**
 * The grant for lib/signing/kms.ts (AWS KMS asymmetric signing keys). lib/routes.ts does not
 * declare it yet, so functions run with SIGNING_KMS_ENABLED=0 and signing in AWS is
 * CloudHSM's; routes that declare `kms:sign` get these permissions and the backend enabled.
 */
export const KMS_SIGN_GRANT = 'kms:sign';
export const usesKmsSigning = (grants: readonly string[]): boolean => grants.includes(KMS_SIGN_GRANT);

/** Every route function's log group: /aws/lambda/<name>-<route> (infra/naming.ts). */
export function logGroupArnPattern(name: string): string {
  return `arn:${Aws.PARTITION}:logs:${Aws.REGION}:${Aws.ACCOUNT_ID}:log-group:/aws/lambda/${name}-*:*`;
}

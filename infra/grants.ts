import { Aws, Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { acknowledge } from './nag.js';
import { Construct } from 'constructs';
import { GRANTS, tenancyOf, type Grant, type Route } from '../lib/routes.js';
import { ACCOUNT_ATTRIBUTES, AUDIT_ATTRIBUTES, DATA_KEY_ATTRIBUTES, METERING_ATTRIBUTES, OPERATOR_ONLY_ATTRIBUTES, PLAN_ATTRIBUTES } from '../lib/tenancy/attributes.js';
import { TENANT_SESSION_PURPOSE, TENANT_SESSION_SECONDS } from '../lib/tenancy/credentials.js';
import { LOOKUP_PREFIXES, ownerMark } from '../lib/tenancy/lookups.js';
import { AUDIT_KEY_PURPOSE } from '../lib/audit/queue-key.js';
import { keys, meterPk, PLATFORM_LISTING_ATTRIBUTES, TABLE_KEYS, TENANT_SESSION_PREFIX } from '../lib/store/keys.js';
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
 * | table:read   | dynamodb:GetItem, BatchGetItem, Query                                    | the table and its gsi1 and plat indexes (by name) |
 * | table:meter  | dynamodb:UpdateItem, LeadingKeys only METER#* and IP#*, Attributes only METERING_ATTRIBUTES (operator and self routes; tenant routes: TenantMeter) | the table |
 * | table:write  | table:read + PutItem, UpdateItem, DeleteItem, ConditionCheckItem         | the table (TransactWriteItems is authorized per item action) |
 * | kms:decrypt  | kms:Decrypt only with an encryption context carrying tenant_id; kms:DescribeKey | the envelope key |
 * | kms:encrypt  | kms:decrypt + kms:GenerateDataKey (same context condition)               | the envelope key |
 * | jobs:send    | sqs:SendMessage; kms:GenerateDataKey + kms:Decrypt only via SQS for this queue | the jobs queue / the key |
 * | audit:send   | sqs:SendMessage; kms:GenerateDataKey + kms:Decrypt only via SQS for this queue (derived: every read-only route, lib/routes.ts) | the audit queue / the key |
 * | queue:send   | sqs:SendMessage; kms:GenerateDataKey + kms:Decrypt only via SQS for this queue | the webhook queue / the key |
 * | hsm          | ec2 network-interface actions Lambda needs in a VPC; cloudhsm:DescribeClusters; secretsmanager:GetSecretValue | * (ENI actions and DescribeClusters take no resource ARN) / the PIN secret |
 * | hsm:describe | cloudhsm:DescribeClusters                                                | * |
 * | payment      | secretsmanager:GetSecretValue (only when context paymentSecretArn is set)   | the payment provider's secret |
 * | documents:read  | s3:GetObject; kms:Decrypt only via S3 for this bucket (SSE-KMS)        | the documents bucket's objects / the key |
 * | documents:write | documents:read + s3:PutObject, s3:DeleteObject; kms:GenerateDataKey via S3 | the documents bucket's objects / the key |
 * | kms:sign     | (not in lib/routes.ts yet) kms:CreateKey+TagResource for SIGN_VERIFY keys tagged tenant_id; Sign, GetPublicKey, ScheduleKeyDeletion on keys tagged tenant_id | * / key/* |
 * | table:ready  | dynamodb:GetItem on the partition SYS only (GET /ready's probe item)      | the table |
 * | kms:describe | kms:DescribeKey                                                          | the envelope key |
 *
 * Tenancy in IAM (docs/architecture.md, "Tenancy in IAM"; lib/routes.ts `tenancyOf`). A
 * TENANT route's table and envelope-key grants are not on its function's role: per grant set
 * there is an EXECUTION role (what authentication needs before the account is known, plus
 * the route's other grants: queues, documents, HSM, payment) and a TENANT-ACCESS role the
 * execution role may assume with a `tenant_id` session tag (lib/tenancy/credentials.ts):
 *
 * | role      | sid               | actions                                 | condition |
 * |-----------|-------------------|-----------------------------------------|-----------|
 * | execution | CredentialRead    | dynamodb:GetItem                        | LeadingKeys only credential items (KEY#, APITOKEN#, DEVICE#) |
 * | execution | AccountRead       | dynamodb:GetItem                        | LeadingKeys T#*, Attributes only ACCOUNT_ATTRIBUTES and present, Select SPECIFIC_ATTRIBUTES if set |
 * | execution | DeviceNonce       | dynamodb:PutItem (device routes)        | LeadingKeys only NONCE# |
 * | execution | TempTokenRead     | dynamodb:GetItem (temp-token routes, instead of CredentialRead and AccountRead) | LeadingKeys only TEMPTOKEN# |
 * | execution | IpMeter           | dynamodb:UpdateItem (temp-token routes: the per-IP limiter runs before the token names the account) | LeadingKeys only IP#*, Attributes only METERING_ATTRIBUTES |
 * | execution | TenantSessionCache | dynamodb:GetItem, PutItem              | LeadingKeys only TSESSION#<its tenant-access role's name>#* (the role's sealed shared sessions) |
 * | execution | TenantSessionKey  | kms:GenerateDataKey, kms:Decrypt        | kms:EncryptionContext purpose = tenant-session and tenant_role = its tenant-access role's name |
 * | execution | AssumeTenantRole  | sts:AssumeRole, sts:TagSession          | the tenant-access role; one tag, tenant_id |
 * | tenant    | TenantRead        | GetItem, BatchGetItem, Query (table, gsi1) | LeadingKeys = T#${aws:PrincipalTag/tenant_id} or METER#${aws:PrincipalTag/tenant_id} |
 * | tenant    | TenantLookups     | GetItem, BatchGetItem, Query            | LeadingKeys only the global lookup prefixes (lib/tenancy/lookups.ts) |
 * | tenant    | TenantLookupWrite | PutItem, UpdateItem (table:write)       | the lookup prefixes; Attributes name the own mark T#${aws:PrincipalTag/tenant_id} and no other T# name (Null false), never platpk/platsk |
 * | tenant    | TenantLookupDelete| DeleteItem, ConditionCheckItem (table:write) | the lookup prefixes; no other account's mark named (deletes of a known key of another account stay possible: DoS) |
 * | tenant    | TenantWrite       | PutItem, UpdateItem, DeleteItem, ConditionCheckItem (table:write) | LeadingKeys = T#${aws:PrincipalTag/tenant_id}; Attributes never OPERATOR_ONLY_ATTRIBUTES (operator; quota but with payment: PLAN_ATTRIBUTES) nor the platform listings' platpk/platsk |
 * | tenant    | TenantMeter       | UpdateItem (every tenant role)          | LeadingKeys = METER#${aws:PrincipalTag/tenant_id} only (the metering partition), and Attributes only METERING_ATTRIBUTES |
 * | tenant    | TenantDataKeys    | kms:Decrypt (+ GenerateDataKey with kms:encrypt) | kms:EncryptionContext:tenant_id = ${aws:PrincipalTag/tenant_id} |
 * | tenant    | TenantDataKeyCreate | PutItem (kms:encrypt without table:write) | LeadingKeys = T#${aws:PrincipalTag/tenant_id}, Attributes only DATA_KEY_ATTRIBUTES (the account's first data-key record) |
 * | tenant    | TenantDocumentObjects | s3:GetObject (+ PutObject, DeleteObject with documents:write) | the documents bucket's `tenants/${aws:PrincipalTag/tenant_id}/*` only |
 * | tenant    | TenantDocumentObjectsKey | kms:Decrypt (+ GenerateDataKey with documents:write) | via S3, encryption context the documents bucket (SSE-KMS with the caller's credentials) |
 * | tenant    | TenantAuditKey    | kms:GenerateDataKey (audit:send)        | encryption context exactly {tenant_id = ${aws:PrincipalTag/tenant_id}, purpose = audit-queue}: the audit queue's MAC key (lib/audit/queue-key.ts) |
 *
 * The metering items (usage per day, rate-limit buckets: lib/ratelimit) are the one write every
 * request makes, read-only routes included; they have their own partition per account
 * (`METER#<tid>`, lib/store/keys.ts `meterPk`), so `TenantMeter` reaches them and no account
 * data: of `T#<tid>`, a read-only route's role writes nothing. lib/tenancy/meter.ts states the
 * same rule for the code (lib/store/client.ts).
 *
 * A read-only route writes no audit entry: it sends it to the audit queue (grant audit:send,
 * on the execution role) and the audit writer (infra/background.ts, lib/audit/queue.ts)
 * writes it with the same two roles, made by auditWriterRoles below:
 *
 * | role      | sid               | actions                                 | condition |
 * |-----------|-------------------|-----------------------------------------|-----------|
 * | execution | AuditQueueConsume | sqs:ReceiveMessage, DeleteMessage, GetQueueAttributes | the audit queue |
 * | execution | AuditQueueKey     | kms:Decrypt                             | via SQS, encryption context the audit queue |
 * | execution | AssumeTenantRole  | sts:AssumeRole, sts:TagSession          | its tenant-access role; one tag, tenant_id |
 * | tenant    | TenantAuditKeyOpen | kms:Decrypt only                       | encryption context exactly {tenant_id = ${aws:PrincipalTag/tenant_id}, purpose = audit-queue}: a message's MAC key, opened for the account it claims |
 * | tenant    | TenantAuditPut    | dynamodb:PutItem only                   | LeadingKeys = T#${aws:PrincipalTag/tenant_id}, Attributes only AUDIT_ATTRIBUTES, ReturnValues NONE |
 *
 * Operator and self-authenticating routes keep the grants above on their own role (the
 * documented exceptions, docs/architecture.md). The share-aware routes are tenant routes: a
 * share's owner-side calls use the same tenant-access role, with a session tagged with the
 * owner's id (lib/tenancy/scope.ts `ownerScope`).
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
  readonly auditQueue: sqs.IQueue;
  readonly auditDeadLetterQueue: sqs.IQueue;
}

/** Execution and tenant-access role of a tenant route's grant set (or of the audit writer). */
export interface TenantRoles {
  readonly execution: iam.Role;
  readonly tenant: iam.Role;
}

export class RouteRoles extends Construct {
  private readonly roles = new Map<string, iam.Role>();
  private readonly tenantRoles = new Map<string, TenantRoles>();

  constructor(scope: Construct, id: string, private readonly props: { routes: readonly Route[]; targets: RoleTargets; settings: Settings }) {
    super(scope, id);
    for (const route of props.routes) this.roleFor(route);
  }

  /** All roles by grant-set key. */
  get all(): ReadonlyMap<string, iam.Role> {
    return this.roles;
  }

  /** Tenant-access roles by `tenant <grant set>[ device| temp-token]` key. */
  get tenantAccess(): ReadonlyMap<string, iam.Role> {
    return new Map([...this.tenantRoles].map(([k, v]) => [k, v.tenant]));
  }

  /** The function's role: a tenant route's execution role, else the role of its grant set. */
  roleFor(route: Route): iam.Role {
    if (tenancyOf(route) === 'tenant') return this.tenantRolesFor(route).execution;
    return this.ownRole(route.grants);
  }

  /** The role of a grant set used as the function's own (operator and self-authenticating routes; the CORS preflight). */
  ownRole(grants: readonly Grant[]): iam.Role {
    const key = grantSetKey(grants);
    let role = this.roles.get(key);
    if (!role) {
      role = this.create(key, grants);
      this.roles.set(key, role);
    }
    return role;
  }

  /** The tenant-access role a tenant route's function assumes per account (undefined for other routes). */
  tenantRoleFor(route: Route): iam.Role | undefined {
    return tenancyOf(route) === 'tenant' ? this.tenantRolesFor(route).tenant : undefined;
  }

  private tenantRolesFor(route: Route): TenantRoles {
    const credential = credentialOf(route);
    const variant = { key: { bearer: '', device: ' device', 'temp-token': ' temp-token' }, id: { bearer: '', device: 'Device', 'temp-token': 'TempToken' } };
    const key = `tenant ${grantSetKey(route.grants)}${variant.key[credential]}`;
    let roles = this.tenantRoles.get(key);
    if (!roles) {
      const { targets, settings } = this.props;
      const id = `Tenant${roleId(grantSetKey(route.grants))}${variant.id[credential]}`;
      const said = { bearer: '', device: ' (signed device requests)', 'temp-token': ' (temporary access tokens)' }[credential];
      roles = tenantRoles(this, id, `${settings.name} tenant route functions with grants: ${grantSetKey(route.grants)}${said}`, route.grants, credential, targets, settings);
      this.tenantRoles.set(key, roles);
      this.roles.set(key, roles.execution);
    }
    return roles;
  }

  private create(key: string, grants: readonly Grant[]): iam.Role {
    const { targets, settings } = this.props;
    // an operator or self-authenticating read-only route knows its account only from the
    // request: its audit MAC key may name any account (docs/architecture.md, "Roles that are
    // not tenant-scoped"); a tenant route's comes from its tenant session (TenantAuditKey)
    const extra = grants.includes('audit:send') ? [auditKeyStatement('AuditKey', 'kms:GenerateDataKey', targets.key, undefined)] : [];
    return grantedRole(this, roleId(key), `${settings.name} route functions with grants: ${key}`, grants, targets, settings, extra);
  }
}

const roleId = (key: string) => (key === 'none' ? 'NoGrants' : key.split(' ').map((g) => g.split(/[^a-z]/).map((w) => w[0]!.toUpperCase() + w.slice(1)).join('')).join(''));

/** The partition key condition of the tenant-access role: the session's own account only. */
export const TENANT_PARTITION = 'T#${aws:PrincipalTag/tenant_id}';
/**
 * The account's metering partition (usage and rate-limit buckets): the only partition
 * `TenantMeter` writes, and one `TenantRead` reads.
 */
export const METER_PARTITION = meterPk('${aws:PrincipalTag/tenant_id}');
/** Every metering partition: the accounts' (usage, rate-limit buckets) and the per-IP rate-limit items (`TableMeter`). */
const METERING_PARTITIONS = [meterPk('*'), keys.ipRate('*').pk] as const;
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

/**
 * A tenant route's two roles (the table at the top of this file): the execution role the
 * function runs with, and the tenant-access role it assumes with a `tenant_id` session tag.
 */
/** What a tenant route's credential is: it decides what the execution role reads before the account is known. */
type TenantCredential = 'bearer' | 'device' | 'temp-token';
const credentialOf = (route: Route): TenantCredential => (route.auth === 'device' || route.auth === 'temp-token' ? route.auth : 'bearer');

/**
 * What a tenant route's execution role does before its credential names the account. A
 * bearer or device credential: the credential item (KEY#, APITOKEN#, DEVICE#) and the
 * projected account read (the gate's rate of the account); a device also its nonce. A
 * temporary access token (GET /api/v1/t/{token}): its TEMPTOKEN# item only, and the per-IP
 * limiter (lib/ratelimit/gate.ts meters a route without a principal by source IP, before the
 * handler reads the token); the account item is read in the tenant session.
 */
function identificationStatements(credential: TenantCredential, tableArn: string): iam.PolicyStatement[] {
  if (credential === 'temp-token') {
    return [
      new iam.PolicyStatement({
        sid: 'TempTokenRead',
        actions: ['dynamodb:GetItem'],
        resources: [tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['TEMPTOKEN#*'] } },
      }),
      new iam.PolicyStatement({
        sid: 'IpMeter',
        actions: ['dynamodb:UpdateItem'],
        resources: [tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [keys.ipRate('*').pk], 'dynamodb:Attributes': [...METERING_ATTRIBUTES] } },
      }),
    ];
  }
  return [
    new iam.PolicyStatement({
      sid: 'CredentialRead',
      actions: ['dynamodb:GetItem'],
      resources: [tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...CREDENTIAL_PARTITIONS] } },
    }),
    new iam.PolicyStatement({
      sid: 'AccountRead',
      actions: ['dynamodb:GetItem'],
      resources: [tableArn],
      // GetItem has no Select parameter: DynamoDB sets no dynamodb:Select for it, so the key is
      // IfExists (a plain StringEquals denied every authenticated request: the IAM evaluation
      // tier, scripts/local/artifact/aws-calls.ts, cites the AWS documentation); a ForAllValues
      // condition holds when its key is absent, so a GetItem without a projection (every
      // attribute of the account item) is refused by the Null condition on dynamodb:Attributes.
      conditions: {
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['T#*'] },
        'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...ACCOUNT_ATTRIBUTES] },
        Null: { 'dynamodb:Attributes': 'false' },
        StringEqualsIfExists: { 'dynamodb:Select': 'SPECIFIC_ATTRIBUTES' },
      },
    }),
    ...(credential === 'device'
      ? [
          new iam.PolicyStatement({
            sid: 'DeviceNonce',
            actions: ['dynamodb:PutItem'],
            resources: [tableArn],
            conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['NONCE#*'] } },
          }),
        ]
      : []),
  ];
}

function tenantRoles(scope: Construct, id: string, description: string, grants: readonly Grant[], credential: TenantCredential, targets: RoleTargets, settings: Settings): TenantRoles {
  const execution = new iam.Role(scope, id, { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'), description });
  const tenant = tenantAccessRole(scope, `${id}Access`, execution, description);
  const own = grantStatements(
    grants.filter((g) => !TENANT_SCOPED_GRANTS.has(g)),
    targets,
    settings,
  );
  const tableArn = targets.table.tableArn;
  const execStatements = [
    ...own.statements,
    ...identificationStatements(credential, tableArn),
    // the role's sessions shared between its containers, sealed (lib/authn/tenant-sessions.ts):
    // this role's items only, opened only under this role's context
    new iam.PolicyStatement({
      sid: 'TenantSessionCache',
      actions: ['dynamodb:GetItem', 'dynamodb:PutItem'],
      resources: [tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${TENANT_SESSION_PREFIX}${tenant.roleName}#*`] } },
    }),
    new iam.PolicyStatement({
      sid: 'TenantSessionKey',
      actions: ['kms:GenerateDataKey', 'kms:Decrypt'],
      resources: [targets.key.keyArn],
      conditions: { StringEquals: { 'kms:EncryptionContext:purpose': TENANT_SESSION_PURPOSE, 'kms:EncryptionContext:tenant_role': tenant.roleName } },
    }),
    assumeTenantRole(tenant),
  ];
  execution.attachInlinePolicy(new iam.Policy(execution, 'Grants', { statements: execStatements }));
  acknowledge(execution, own.acknowledgments);
  const bucketArn = `arn:${Aws.PARTITION}:s3:::${documentsBucketName(settings.name)}`;
  tenant.attachInlinePolicy(new iam.Policy(tenant, 'Grants', { statements: tenantAccessStatements(grants, targets, bucketArn) }));
  if (grants.includes('documents:read') || grants.includes('documents:write')) {
    acknowledge(tenant, [
      {
        id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::${settings.name}-documents-<AWS::AccountId>-<AWS::Region>/tenants/<aws:PrincipalTag/tenant_id>/*]`,
        reason: 'Documents are objects under tenants/<tenant>/documents/<id>/v<n>, created at run time; a tenant session reaches only its own tenant\'s prefix (the session tag in the resource), and each object is sealed with its tenant\'s data key.',
      },
    ]);
  }
  return { execution, tenant };
}

/** The tenant-access role `execution` assumes with a `tenant_id` session tag (lib/tenancy/credentials.ts). */
function tenantAccessRole(scope: Construct, id: string, execution: iam.Role, description: string): iam.Role {
  return new iam.Role(scope, id, {
    assumedBy: new iam.SessionTagsPrincipal(new iam.ArnPrincipal(execution.roleArn)),
    description: `${description}: tenant access (assumed per account with a tenant_id session tag)`,
    // the sessions lib/tenancy/credentials.ts asks for (a chained AssumeRole's maximum)
    maxSessionDuration: Duration.seconds(TENANT_SESSION_SECONDS),
  });
}

/** The execution role's AssumeRole of its tenant-access role: with exactly one session tag, tenant_id. */
function assumeTenantRole(tenant: iam.Role): iam.PolicyStatement {
  return new iam.PolicyStatement({
    sid: 'AssumeTenantRole',
    actions: ['sts:AssumeRole', 'sts:TagSession'],
    resources: [tenant.roleArn],
    conditions: {
      Null: { 'aws:RequestTag/tenant_id': 'false' },
      'ForAllValues:StringEquals': { 'aws:TagKeys': ['tenant_id'] },
    },
  });
}

/**
 * A background worker that acts for one account at a time (infra/background.ts, `tenantAccess:
 * 'grants'`): the account comes from its queue message or from a platform listing's entry, and
 * everything it does in that account goes through a session of its tenant-access role tagged
 * with it (lib/tenancy/scope.ts `withTenant`), whose statements are a tenant route's for the
 * same grants. The execution role keeps the grants that are not the account's (queues,
 * `extra`), the platform listings it reads on index plat (`listings`: Query with
 * `dynamodb:LeadingKeys` `<listing>#*` only; plat is KEYS_ONLY, so an entry gives the keys of
 * the listed item and nothing of it), and the AssumeRole.
 */
export function workerRoles(
  scope: Construct,
  id: string,
  description: string,
  grants: readonly Grant[],
  targets: RoleTargets,
  settings: Settings,
  extra: readonly iam.PolicyStatement[],
  listings: readonly string[],
): TenantRoles {
  const execution = new iam.Role(scope, id, { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'), description });
  const tenant = tenantAccessRole(scope, `${id}Access`, execution, description);
  const own = grantStatements(
    grants.filter((g) => !TENANT_SCOPED_GRANTS.has(g)),
    targets,
    settings,
  );
  const listingRead = listings.length
    ? [
        new iam.PolicyStatement({
          sid: 'PlatformListingRead',
          actions: ['dynamodb:Query'],
          resources: [`${targets.table.tableArn}/index/${TABLE_KEYS.plat.name}`],
          conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': listings.map((l) => `${l}#*`) }, Null: { 'dynamodb:LeadingKeys': 'false' } },
        }),
      ]
    : [];
  execution.attachInlinePolicy(new iam.Policy(execution, 'Grants', { statements: [...own.statements, ...extra, ...listingRead, assumeTenantRole(tenant)] }));
  acknowledge(execution, own.acknowledgments);
  const bucketArn = `arn:${Aws.PARTITION}:s3:::${documentsBucketName(settings.name)}`;
  tenant.attachInlinePolicy(new iam.Policy(tenant, 'Grants', { statements: tenantAccessStatements(grants, targets, bucketArn) }));
  return { execution, tenant };
}

/** Grants a tenant route holds through its tenant-access role, not its execution role. */
const TENANT_SCOPED_GRANTS: ReadonlySet<Grant> = new Set(['table:read', 'table:meter', 'table:write', 'kms:decrypt', 'kms:encrypt', 'documents:read', 'documents:write']);

/** The tenant-access role's statements: every one conditioned on the session's account. */
export function tenantAccessStatements(grants: readonly Grant[], targets: Pick<RoleTargets, 'table' | 'key'>, documentsBucketArn?: string): iam.PolicyStatement[] {
  const has = (g: Grant) => grants.includes(g);
  const tableArn = targets.table.tableArn;
  const leading = { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [TENANT_PARTITION] } };
  const statements: iam.PolicyStatement[] = [];
  if (has('table:read') || has('table:write')) {
    // the metering partition on every tenant role: a role serves every route of its grant set
    // (GET /usage shares its set with most read-only routes), and what it holds, the account's
    // own request counts, any credential of the account may read through GET /usage anyway
    statements.push(
      new iam.PolicyStatement({
        sid: 'TenantRead',
        actions: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'],
        resources: [tableArn, `${tableArn}/index/${TABLE_KEYS.gsi1.name}`],
        conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [TENANT_PARTITION, METER_PARTITION] } },
      }),
    );
  }
  // the global lookup items written beside the account's (lib/tenancy/lookups.ts): read-only
  // routes only read them
  const lookupPartitions = LOOKUP_PREFIXES.map((p) => `${p}*`);
  if (has('table:read') || has('table:write')) {
    statements.push(
      new iam.PolicyStatement({
        sid: 'TenantLookups',
        actions: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'],
        resources: [tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': lookupPartitions } },
      }),
    );
  }
  if (has('table:write')) {
    // A lookup item names its account inside, a value IAM never sees; its owner mark is an
    // attribute NAME (`T#<tid>`, lib/tenancy/lookups.ts), which IAM sees in dynamodb:Attributes:
    // a Put or Update names the session's own mark (ForAnyValue) and no other `T#` name
    // (ForAllValues over LOOKUP_ITEM_ATTRIBUTES: the own mark, or a name starting with a
    // lower-case letter, as every attribute the code writes does), and the key must be present
    // (Null false: a ForAllValues condition holds when its key is absent). Readers drop an item
    // whose mark is not its account's, so an item naming another account is dead on arrival.
    // Condition keys: DynamoDB sets dynamodb:Attributes on PutItem (the item's attribute
    // names) and UpdateItem (the names in the key, update and condition expressions):
    // https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html
    // and the Service Authorization Reference, "Actions, resources, and condition keys for
    // Amazon DynamoDB" (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazondynamodb.html).
    statements.push(
      new iam.PolicyStatement({
        sid: 'TenantLookupWrite',
        actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
        resources: [tableArn],
        conditions: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': lookupPartitions, 'dynamodb:Attributes': [...LOOKUP_ITEM_ATTRIBUTES] },
          'ForAllValues:StringNotEquals': { 'dynamodb:Attributes': [...PLATFORM_LISTING_ATTRIBUTES] },
          'ForAnyValue:StringEquals': { 'dynamodb:Attributes': [OWN_MARK] },
          Null: { 'dynamodb:Attributes': 'false' },
        },
      }),
      // Delete and ConditionCheck write no attribute: AWS documents no dynamodb:Attributes for
      // what a DeleteItem removes (only, at most, the names of its key and condition), so no
      // attribute condition can confine them to the session's own items. What this leaves
      // (docs/architecture.md, "Tenancy in IAM"): a tenant session can delete another account's
      // lookup item whose key it knows (a recipient's e-mail: SHAREDWITH#, DOCGRANTEE#): a
      // denial of service, never a credential or access of the other account. The attribute
      // condition keeps it from naming another account's mark in a condition.
      new iam.PolicyStatement({
        sid: 'TenantLookupDelete',
        actions: ['dynamodb:DeleteItem', 'dynamodb:ConditionCheckItem'],
        resources: [tableArn],
        conditions: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': lookupPartitions, 'dynamodb:Attributes': [...LOOKUP_ITEM_ATTRIBUTES] },
          'ForAllValues:StringNotEquals': { 'dynamodb:Attributes': [...PLATFORM_LISTING_ATTRIBUTES] },
        },
      }),
    );
  }
  if (has('table:meter') || has('table:write')) {
    // the limiter's write (lib/ratelimit/bucket.ts), on every tenant route: the metering
    // partition only (TenantWrite does not reach it), naming only the metering attributes
    statements.push(
      new iam.PolicyStatement({
        sid: 'TenantMeter',
        actions: ['dynamodb:UpdateItem'],
        resources: [tableArn],
        conditions: {
          'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [METER_PARTITION] },
          'ForAllValues:StringLike': { 'dynamodb:Attributes': [...METERING_ATTRIBUTES] },
        },
      }),
    );
  }
  if (has('table:write')) {
    statements.push(
      new iam.PolicyStatement({
        sid: 'TenantWrite',
        actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:ConditionCheckItem'],
        resources: [tableArn],
        // the account item's operator flag and quota are the platform's (an account's own
        // session setting them made itself an operator: found by the negative matrix's review);
        // the billing routes write the quota a confirmed plan sets. The platform listings' key
        // attributes likewise (lib/store/keys.ts, "Platform listings"): IAM sees names, not
        // values, so a session naming platpk could put any own item into TENANTS, AUDIT, LEASES
        // (a forged due lease starved the sweeper), EMAIL or TOKENKEYS
        conditions: {
          ...leading,
          'ForAllValues:StringNotEquals': {
            'dynamodb:Attributes': [
              ...OPERATOR_ONLY_ATTRIBUTES.filter((a) => !(has('payment') && (PLAN_ATTRIBUTES as readonly string[]).includes(a))),
              ...PLATFORM_LISTING_ATTRIBUTES,
            ],
          },
        },
      }),
    );
  }
  if (has('kms:encrypt') && !has('table:write')) {
    // the first seal of an account creates its data-key record (lib/crypto/envelope.ts); a
    // sealing route that writes nothing else may put that item in its own partition, naming
    // only the record's attributes (the IAM evaluation tier found POST /ipfs/store denied)
    statements.push(
      new iam.PolicyStatement({
        sid: 'TenantDataKeyCreate',
        actions: ['dynamodb:PutItem'],
        resources: [tableArn],
        conditions: {
          'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [TENANT_PARTITION], 'dynamodb:Attributes': [...DATA_KEY_ATTRIBUTES] },
          Null: { 'dynamodb:Attributes': 'false' },
        },
      }),
    );
  }
  if (has('kms:decrypt') || has('kms:encrypt')) {
    statements.push(
      new iam.PolicyStatement({
        sid: 'TenantDataKeys',
        actions: has('kms:encrypt') ? ['kms:Decrypt', 'kms:GenerateDataKey'] : ['kms:Decrypt'],
        resources: [targets.key.keyArn],
        conditions: { StringEquals: { 'kms:EncryptionContext:tenant_id': '${aws:PrincipalTag/tenant_id}' } },
      }),
    );
  }
  if ((has('documents:read') || has('documents:write')) && documentsBucketArn) {
    statements.push(...documentStatements(has('documents:write'), documentsBucketArn, `tenants/${TENANT_TAG}/*`, targets.key, 'Tenant'));
  }
  if (has('audit:send')) {
    // the audit queue's MAC key (lib/audit/queue-key.ts): a data key of the session's own
    // account for that one purpose, so an entry sent by this session vouches for no other account
    statements.push(auditKeyStatement('TenantAuditKey', 'kms:GenerateDataKey', targets.key, TENANT_TAG));
  }
  return statements;
}

/** The session's tenant, as the tenant-access roles' conditions name it. */
const TENANT_TAG = '${aws:PrincipalTag/tenant_id}';

/**
 * The audit queue's MAC key (lib/audit/queue-key.ts): `action` on the envelope key only with
 * the encryption context `{tenant_id: <tenant>, purpose: "audit-queue"}`, exactly those two
 * keys. `tenant` is the session's tag on a tenant-access role; undefined (any account, the key
 * still present) on the own role of an operator or self-authenticating read-only route.
 */
function auditKeyStatement(sid: string, action: 'kms:GenerateDataKey' | 'kms:Decrypt', key: kms.IKey, tenant: string | undefined): iam.PolicyStatement {
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

/**
 * The audit writer's roles (the second table at the top of this file): an execution role
 * that consumes the audit queue and assumes its tenant-access role with a `tenant_id` tag,
 * and that tenant-access role, allowed nothing but the PutItem of an audit entry in the
 * session's account. The writer never reads, updates or deletes an item.
 */
export function auditWriterRoles(scope: Construct, id: string, description: string, targets: RoleTargets, settings: Settings): TenantRoles {
  const execution = new iam.Role(scope, id, { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'), description });
  const tenant = tenantAccessRole(scope, `${id}Access`, execution, description);
  const own = grantStatements([], targets, settings);
  execution.attachInlinePolicy(
    new iam.Policy(execution, 'Grants', {
      statements: [
        ...own.statements,
        new iam.PolicyStatement({
          sid: 'AuditQueueConsume',
          actions: ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'],
          resources: [targets.auditQueue.queueArn],
        }),
        new iam.PolicyStatement({
          sid: 'AuditQueueKey',
          actions: ['kms:Decrypt'],
          resources: [targets.key.keyArn],
          conditions: {
            StringEquals: {
              'kms:ViaService': `sqs.${Aws.REGION}.${Aws.URL_SUFFIX}`,
              'kms:EncryptionContext:aws:sqs:arn': targets.auditQueue.queueArn,
            },
          },
        }),
        assumeTenantRole(tenant),
      ],
    }),
  );
  acknowledge(execution, own.acknowledgments);
  tenant.attachInlinePolicy(new iam.Policy(tenant, 'Grants', { statements: auditWriterStatements(targets) }));
  return { execution, tenant };
}

/**
 * The audit writer's tenant-access statements: one audit entry put in the session's account,
 * and the opening of that account's audit MAC keys (lib/audit/queue-key.ts), nothing else.
 */
export function auditWriterStatements(targets: Pick<RoleTargets, 'table' | 'key'>): iam.PolicyStatement[] {
  return [
    auditKeyStatement('TenantAuditKeyOpen', 'kms:Decrypt', targets.key, TENANT_TAG),
    new iam.PolicyStatement({
      sid: 'TenantAuditPut',
      actions: ['dynamodb:PutItem'],
      resources: [targets.table.tableArn],
      conditions: {
        'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [TENANT_PARTITION], 'dynamodb:Attributes': [...AUDIT_ATTRIBUTES] },
        // the put returns nothing: no attribute of an item it collides with is read back
        StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
      },
    }),
  ];
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
  tableWritePartitions?: readonly string[],
): iam.Role {
  const role = new iam.Role(scope, id, { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'), description });
  const { statements, acknowledgments } = grantStatements(grants, targets, settings, tableWritePartitions);
  role.attachInlinePolicy(new iam.Policy(role, 'Grants', { statements: [...statements, ...extra] }));
  acknowledge(role, acknowledgments);
  return role;
}

/** The statements of a grant set (the table at the top of this file). */
export function grantStatements(
  grants: readonly Grant[],
  targets: RoleTargets,
  settings: Settings,
  /** `table:write` confined to these partitions (`dynamodb:LeadingKeys`, StringLike); unconditioned without. */
  tableWritePartitions?: readonly string[],
): { statements: iam.PolicyStatement[]; acknowledgments: { id: string; reason: string }[] } {
  const has = (g: Grant) => grants.includes(g);
  const statements: iam.PolicyStatement[] = [
    new iam.PolicyStatement({ sid: 'Logs', actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [logGroupArnPattern(settings.name)] }),
  ];
  const tableArn = targets.table.tableArn;
  const indexArns = [TABLE_KEYS.gsi1.name, TABLE_KEYS.plat.name].map((name) => `${tableArn}/index/${name}`);
  const reads = has('table:read') || has('table:write');
  if (reads) {
    statements.push(new iam.PolicyStatement({ sid: 'TableRead', actions: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'], resources: [tableArn] }));
    // gsi1 and the platform listings (operator listings, the sweeper, the service's key set)
    statements.push(new iam.PolicyStatement({ sid: 'IndexRead', actions: ['dynamodb:Query'], resources: indexArns }));
  }
  if (has('table:write')) {
    statements.push(
      new iam.PolicyStatement({
        sid: 'TableWrite',
        actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:ConditionCheckItem'],
        resources: [tableArn],
        ...(tableWritePartitions ? { conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...tableWritePartitions] } } } : {}),
      }),
    );
  } else if (has('table:meter')) {
    // operator and self-authenticating read-only routes: the metering items only, of any
    // account (these routes are not tenant-scoped) and the per-IP rate-limit items
    statements.push(
      new iam.PolicyStatement({
        sid: 'TableMeter',
        actions: ['dynamodb:UpdateItem'],
        resources: [tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...METERING_PARTITIONS], 'dynamodb:Attributes': [...METERING_ATTRIBUTES] } },
      }),
    );
  }
  if (has('table:ready')) {
    statements.push(
      new iam.PolicyStatement({
        sid: 'ReadinessProbe',
        actions: ['dynamodb:GetItem'],
        resources: [tableArn],
        conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['SYS'] } },
      }),
    );
  }
  if (has('kms:describe')) {
    statements.push(new iam.PolicyStatement({ sid: 'KeyDescribe', actions: ['kms:DescribeKey'], resources: [targets.key.keyArn] }));
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
    statements.push(...queueSend('QueueSend', 'QueueKey', targets.queue, targets.key));
  }
  const documents = has('documents:read') || has('documents:write');
  const bucketArn = `arn:${Aws.PARTITION}:s3:::${documentsBucketName(settings.name)}`;
  if (documents) statements.push(...documentStatements(has('documents:write'), bucketArn, 'tenants/*', targets.key, ''));
  if (has('audit:send')) {
    // a read-only route's audit entries (lib/audit/queue.ts): SendMessage only, on the audit queue only
    statements.push(...queueSend('AuditSend', 'AuditQueueKey', targets.auditQueue, targets.key));
  }
  if (has('jobs:send')) {
    statements.push(...queueSend('JobsSend', 'JobsKey', targets.jobsQueue, targets.key));
  }
  const acknowledgments: { id: string; reason: string }[] = [
    {
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:/aws/lambda/${settings.name}-*:*]`,
      reason: 'A role is shared by every function with the same grants, and its functions write their logs to groups named /aws/lambda/<name>-<route>: the pattern lets them write log streams in any log group of this deployment (and of another deployment whose name starts with "<name>-"), not only their own; it grants no read. Naming each group would grow with every route of the role. The logger logs metadata only, never a body, header value or secret (lib/core/logger.ts; the suite\'s leak scan searches every log line for canary values).',
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
/**
 * The documents bucket's objects under `prefix` (a tenant-access role: the session's own
 * `tenants/${aws:PrincipalTag/tenant_id}/*`), and the bucket's SSE-KMS key only through S3 for
 * this bucket: S3 calls KMS with the caller's credentials, so the role that signs the object
 * request is the one that needs the key (bucket keys: the context is the bucket's ARN).
 */
function documentStatements(write: boolean, bucketArn: string, prefix: string, key: kms.IKey, sidPrefix: string): iam.PolicyStatement[] {
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

/** SendMessage on one queue, and its data key only through SQS for that queue (SSE-KMS under the envelope key). */
function queueSend(sid: string, keySid: string, queue: sqs.IQueue, key: kms.IKey): iam.PolicyStatement[] {
  return [
    new iam.PolicyStatement({ sid, actions: ['sqs:SendMessage'], resources: [queue.queueArn] }),
    new iam.PolicyStatement({
      sid: keySid,
      actions: ['kms:GenerateDataKey', 'kms:Decrypt'],
      resources: [key.keyArn],
      conditions: { StringEquals: { 'kms:ViaService': `sqs.${Aws.REGION}.${Aws.URL_SUFFIX}`, 'kms:EncryptionContext:aws:sqs:arn': queue.queueArn } },
    }),
  ];
}

export const usesKmsSigning = (grants: readonly string[]): boolean => grants.includes(KMS_SIGN_GRANT);

/** Every route function's log group: /aws/lambda/<name>-<route> (infra/naming.ts). */
export function logGroupArnPattern(name: string): string {
  return `arn:${Aws.PARTITION}:logs:${Aws.REGION}:${Aws.ACCOUNT_ID}:log-group:/aws/lambda/${name}-*:*`;
}

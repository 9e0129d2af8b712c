import * as iam from 'aws-cdk-lib/aws-iam';
import { Stack } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { GRANTS, OPERATOR_WRITES, OWN_PARTITIONS, ownItemsKey, tenancyOf, tenantCredentialOf, type Grant, type OwnItems, type Route } from '../lib/routes.js';
import { auditKeyStatement } from './grants/kms.js';
import { grantedRole } from './grants/own-role.js';
import type { RoleTargets, TenantRoles } from './grants/common.js';
import { tenantRoles } from './grants/tenant-access.js';
import type { Settings } from './settings.js';

export type { RoleTargets, TenantRoles } from './grants/common.js';
export { KMS_SIGN_GRANT, usesKmsSigning } from './grants/kms.js';
export { grantedRole, grantStatements } from './grants/own-role.js';
export { auditWriterRoles, auditWriterStatements, tenantAccessStatements, workerRoles } from './grants/tenant-access.js';
export { platformListingWrite } from './grants/table.js';

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
 * | table:read   | dynamodb:GetItem, BatchGetItem, Query (a route in lib/routes.ts OWN_PARTITIONS: only its own items, OwnItemRead/OwnItemWrite, and with `listed` its platform listings and the listed items' declared attributes, PlatformListingRead/ListedItemRead) | the table and its gsi1 and plat indexes (by name) |
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
 * | execution | IpMeter           | dynamodb:UpdateItem (temp-token and signed-event routes: the per-IP limiter runs before the token or event names the account) | LeadingKeys only IP#*, Attributes only METERING_ATTRIBUTES |
 *
 * A signed-event route (POST /webhooks/{payment_provider}, lib/routes.ts
 * SELF_IDENTIFYING_TENANT_ROUTES) reads nothing of the table before the provider's verified
 * event names the account: its execution role holds IpMeter and no read at all.
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
 * The workers that act for one account per queue message or listing entry (infra/background.ts,
 * `tenantAccess: 'grants'`: the webhook delivery worker, the jobs worker, the lease and the
 * certificate expiry sweepers, the outbox relay for each stream record's account) get the same
 * pair from workerRoles: the execution role keeps its queue statements, PlatformListingRead
 * (Query on index plat, LeadingKeys only its listings' `<listing>#*`), for the relay
 * PlatformListingWrite (UpdateItem on T#* naming only pk, sk, platpk, platsk; ReturnValues
 * NONE) and AssumeTenantRole; the tenant-access role has a tenant route's statements
 * for the worker's grants.
 *
 * Where each statement is written (infra/grants/): the own role's table statements and what an
 * execution role reads before the account is known in table.ts; the tenant-access role's table
 * statements in tenant-table.ts; data keys, the audit MAC key, the shared sessions' key and KMS
 * signing in kms.ts; queues in queues.ts; documents in documents.ts; HSM, payment and the
 * cdk-nag acknowledgments in platform.ts; the composition of a function's own role in
 * own-role.ts and of the execution/tenant-access pairs in tenant-access.ts.
 *
 * Operator and self-authenticating routes keep the grants above on their own role (the
 * documented exceptions, docs/architecture.md). The share-aware routes are tenant routes: a
 * share's owner-side calls use the same tenant-access role, with a session tagged with the
 * owner's id (lib/tenancy/scope.ts `ownerScope`).
 */
export function grantSetKey(grants: readonly Grant[]): string {
  return [...grants].sort((a, b) => GRANTS.indexOf(a) - GRANTS.indexOf(b)).join(' ') || 'none';
}

export class RouteRoles extends Construct {
  private readonly roles = new Map<string, iam.Role>();
  private readonly tenantRoles = new Map<string, TenantRoles>();

  constructor(
    scope: Construct,
    id: string,
    private readonly props: {
      routes: readonly Route[];
      targets: RoleTargets;
      settings: Settings;
    },
  ) {
    super(scope, id);
    // the role pairs of routes with own items are made by their family's stack, beside their function (tenantRolesFor)
    for (const route of props.routes) if (!(tenancyOf(route) === 'tenant' && tenantCredentialOf(route) === 'own-items')) this.roleFor(route);
  }

  /** All roles by grant-set key. */
  get all(): ReadonlyMap<string, iam.Role> {
    return this.roles;
  }

  /** Tenant-access roles by `tenant <grant set>[ device| temp-token| signed-event| own-items][ own reads ... writes ...]` key. */
  get tenantAccess(): ReadonlyMap<string, iam.Role> {
    return new Map([...this.tenantRoles].map(([k, v]) => [k, v.tenant]));
  }

  /** The function's role: a tenant route's execution role, else the role of its grant set (and own items). */
  roleFor(route: Route, scope?: Construct): iam.Role {
    if (tenancyOf(route) === 'tenant') return this.tenantRolesFor(route, scope).execution;
    return this.ownRole(route.grants, route);
  }

  /**
   * The role of a grant set used as the function's own (operator and self-authenticating
   * routes; the CORS preflight); for a route with own items (lib/routes.ts OWN_PARTITIONS) a
   * role of its own whose table statements are those items only.
   */
  ownRole(grants: readonly Grant[], route?: Route): iam.Role {
    const own = route ? OWN_PARTITIONS[route.key] : undefined;
    // the operator's write routes: their writes only where operators write (OPERATOR_WRITES)
    const operator = route !== undefined && tenancyOf(route) === 'operator' && grants.includes('table:write');
    const key = `${grantSetKey(grants)}${route ? ownItemsKey(route) : ''}${operator ? ' operator' : ''}`;
    let role = this.roles.get(key);
    if (!role) {
      role = this.create(key, grants, own, operator ? OPERATOR_WRITES : undefined);
      this.roles.set(key, role);
    }
    return role;
  }

  /** The tenant-access role a tenant route's function assumes per account (undefined for other routes). */
  tenantRoleFor(route: Route, scope?: Construct): iam.Role | undefined {
    return tenancyOf(route) === 'tenant' ? this.tenantRolesFor(route, scope).tenant : undefined;
  }

  /**
   * `scope`: the stack of the function that asks (a family's nested stack). The role pair of a
   * route with own items is made there, beside its one function: a pair in a sibling nested
   * stack reached the family through parameters whose values the parent template named by the
   * sibling's logical ids, which no CloudFormation resolves (test:deploy: moto answered 500).
   */
  private tenantRolesFor(route: Route, scope?: Construct): TenantRoles {
    const credential = tenantCredentialOf(route);
    const own = credential === 'own-items' ? OWN_PARTITIONS[route.key] : undefined;
    const variant = {
      key: { bearer: '', device: ' device', 'temp-token': ' temp-token', 'signed-event': ' signed-event', 'own-items': ' own-items' },
      id: { bearer: '', device: 'Device', 'temp-token': 'TempToken', 'signed-event': 'SignedEvent', 'own-items': '' },
    };
    const key = `tenant ${grantSetKey(route.grants)}${variant.key[credential]}${own ? ownItemsKey(route) : ''}`;
    let roles = this.tenantRoles.get(key);
    if (roles && own && scope && Stack.of(roles.execution) !== Stack.of(scope)) {
      throw new Error(`${route.key}: its own-items roles (${key}) are already in ${Stack.of(roles.execution).node.path}; a route with own items shares them only within its family's stack`);
    }
    if (!roles) {
      const { targets, settings } = this.props;
      const id = `Tenant${roleId(grantSetKey(route.grants))}${variant.id[credential]}${own ? ownId(own) : ''}`;
      const said = {
        bearer: '',
        device: ' (signed device requests)',
        'temp-token': ' (temporary access tokens)',
        'signed-event': ' (signed provider events)',
        'own-items': ` (its own items name the account:${ownItemsKey(route)})`,
      }[credential];
      const home = own ? (scope ?? this) : this;
      roles = tenantRoles(home, id, `${settings.name} tenant route functions with grants: ${grantSetKey(route.grants)}${said}`, route.grants, credential, targets, settings, own);
      this.tenantRoles.set(key, roles);
      this.roles.set(key, roles.execution);
    }
    return roles;
  }

  private create(key: string, grants: readonly Grant[], own?: OwnItems, operatorWrites?: readonly string[]): iam.Role {
    const { targets, settings } = this.props;
    // an operator route knows the account it acts on only from the request: its audit MAC key
    // may name any account (docs/architecture.md, "Roles that are not tenant-scoped"); a tenant
    // route's comes from its tenant session (TenantAuditKey). A route on its own items (OIDC
    // discovery, the JWKS) audits no account: with this key it could have sealed an audit
    // message for any account, which the audit queue's MAC exists to prevent
    const extra = grants.includes('audit:send') && !own ? [auditKeyStatement('AuditKey', 'kms:GenerateDataKey', targets.key, undefined)] : [];
    const id = `${roleId(grantSetKey(grants))}${own ? ownId(own) : ''}${operatorWrites ? 'Operator' : ''}`;
    return grantedRole(this, id, `${settings.name} route functions with grants: ${key}`, grants, targets, settings, extra, own, operatorWrites);
  }
}

/** A construct id part for own items: `Own` and their partitions' names (`OwnDevauthzUsercode`), `AccessToken` when the route also takes one. */
const ownId = (own: OwnItems) =>
  `Own${[...new Set([...(own.read ?? []), ...(own.write ?? []), ...(own.listed?.listings ?? [])].map((p) => p.replace(/[^A-Za-z]/g, '').toLowerCase()))].map((w) => w[0]!.toUpperCase() + w.slice(1)).join('')}${own.accessToken ? 'AccessToken' : ''}`;

const roleId = (key: string) => (key === 'none' ? 'NoGrants' : key.split(' ').map((g) => g.split(/[^a-z]/).map((w) => w[0]!.toUpperCase() + w.slice(1)).join('')).join(''));


import { Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import type { Grant, OwnItems, TenantCredential } from '../../lib/routes.js';
import { TENANT_SESSION_SECONDS } from '../../lib/tenancy/credentials.js';
import { acknowledge } from '../nag.js';
import type { Settings } from '../settings.js';
import { documentsBucketArn, type RoleTargets, TENANT_TAG, type TenantRoles } from './common.js';
import { documentsAcknowledgment, documentStatements, usesDocuments } from './documents.js';
import { auditKeyStatement, dataKeyStatements, tenantSessionKeyStatement } from './kms.js';
import { grantStatements, lambdaRole } from './own-role.js';
import { auditQueueConsume } from './queues.js';
import { identificationStatements, platformListingRead, tenantSessionCacheStatement } from './table.js';
import { auditPutStatement, tenantTableStatements } from './tenant-table.js';

/** Grants a tenant route (or a worker acting for one account) holds through its tenant-access role, not its execution role. */
const TENANT_SCOPED_GRANTS: ReadonlySet<Grant> = new Set(['table:read', 'table:meter', 'table:write', 'kms:decrypt', 'kms:encrypt', 'documents:read', 'documents:write']);

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
 * The pair of roles: an execution role allowed `grants` except the tenant-scoped ones, plus
 * `extra` and the AssumeRole; and its tenant-access role allowed `tenantStatements(tenant)`.
 */
function rolePair(
  scope: Construct,
  id: string,
  description: string,
  own: { grants: readonly Grant[]; targets: RoleTargets; settings: Settings },
  extra: (tenant: iam.Role) => iam.PolicyStatement[],
  tenantStatements: iam.PolicyStatement[],
): TenantRoles {
  const execution = lambdaRole(scope, id, description);
  const tenant = tenantAccessRole(scope, `${id}Access`, execution, description);
  const granted = grantStatements(
    own.grants.filter((g) => !TENANT_SCOPED_GRANTS.has(g)),
    own.targets,
    own.settings,
  );
  execution.attachInlinePolicy(new iam.Policy(execution, 'Grants', { statements: [...granted.statements, ...extra(tenant), assumeTenantRole(tenant)] }));
  acknowledge(execution, granted.acknowledgments);
  tenant.attachInlinePolicy(new iam.Policy(tenant, 'Grants', { statements: tenantStatements }));
  return { execution, tenant };
}

/**
 * A tenant route's two roles (infra/grants.ts, the second table): the execution role the
 * function runs with (what it does before its credential names the account, and its shared
 * sessions), and the tenant-access role it assumes with a `tenant_id` session tag.
 */
export function tenantRoles(
  scope: Construct,
  id: string,
  description: string,
  grants: readonly Grant[],
  credential: TenantCredential,
  targets: RoleTargets,
  settings: Settings,
  /** With `own-items`: the route's own global items (lib/routes.ts OWN_PARTITIONS). */
  own?: OwnItems,
): TenantRoles {
  const tableArn = targets.table.tableArn;
  const roles = rolePair(
    scope,
    id,
    description,
    { grants, targets, settings },
    (tenant) => [...identificationStatements(credential, tableArn, own), tenantSessionCacheStatement(tableArn, tenant.roleName), tenantSessionKeyStatement(targets.key, tenant.roleName)],
    tenantAccessStatements(grants, targets, documentsBucketArn(settings.name)),
  );
  if (usesDocuments(grants)) acknowledge(roles.tenant, [documentsAcknowledgment(settings.name, true)]);
  return roles;
}

/**
 * A background worker that acts for one account at a time (infra/background.ts, `tenantAccess:
 * 'grants'`): the account comes from its queue message or from a platform listing's entry, and
 * everything it does in that account goes through a session of its tenant-access role tagged
 * with it (lib/tenancy/scope.ts `withTenant`), whose statements are a tenant route's for the
 * same grants. The execution role keeps the grants that are not the account's (queues,
 * `extra`), the platform listings it reads on index plat (`listings`), and the AssumeRole.
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
  const reads = () => [...extra, ...platformListingRead(targets.table.tableArn, listings)];
  return rolePair(scope, id, description, { grants, targets, settings }, reads, tenantAccessStatements(grants, targets, documentsBucketArn(settings.name)));
}

/**
 * The audit writer's roles (infra/grants.ts, the third table): an execution role that
 * consumes the audit queue and assumes its tenant-access role with a `tenant_id` tag, and that
 * tenant-access role, allowed nothing but the PutItem of an audit entry in the session's
 * account. The writer never reads, updates or deletes an item.
 */
export function auditWriterRoles(scope: Construct, id: string, description: string, targets: RoleTargets, settings: Settings): TenantRoles {
  return rolePair(scope, id, description, { grants: [], targets, settings }, () => auditQueueConsume(targets), auditWriterStatements(targets));
}

/**
 * The audit writer's tenant-access statements: one audit entry put in the session's account,
 * and the opening of that account's audit MAC keys (lib/audit/queue-key.ts), nothing else.
 */
export function auditWriterStatements(targets: Pick<RoleTargets, 'table' | 'key'>): iam.PolicyStatement[] {
  return [auditKeyStatement('TenantAuditKeyOpen', 'kms:Decrypt', targets.key, TENANT_TAG), auditPutStatement(targets.table.tableArn)];
}

/** The tenant-access role's statements: every one conditioned on the session's account. */
export function tenantAccessStatements(grants: readonly Grant[], targets: Pick<RoleTargets, 'table' | 'key'>, documentsBucket?: string): iam.PolicyStatement[] {
  return [
    ...tenantTableStatements(grants, targets.table.tableArn),
    ...dataKeyStatements(grants, targets.key, true),
    ...(documentsBucket ? documentStatements(grants, documentsBucket, `tenants/${TENANT_TAG}/*`, targets.key, 'Tenant') : []),
    // the audit queue's MAC key (lib/audit/queue-key.ts): a data key of the session's own
    // account for that one purpose, so an entry sent by this session vouches for no other account
    ...(grants.includes('audit:send') ? [auditKeyStatement('TenantAuditKey', 'kms:GenerateDataKey', targets.key, TENANT_TAG)] : []),
  ];
}

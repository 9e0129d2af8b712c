import * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import type { Grant, OwnItems } from '../../lib/routes.js';
import { acknowledge } from '../nag.js';
import type { Settings } from '../settings.js';
import { type Acknowledgment, documentsBucketArn, logGroupArnPattern, type RoleTargets } from './common.js';
import { documentStatements } from './documents.js';
import { dataKeyStatements, keyDescribeStatements, kmsSigningStatements } from './kms.js';
import { ownAcknowledgments, platformStatements } from './platform.js';
import { auditQueueSend, jobsQueueSend, webhookQueueSend } from './queues.js';
import { ownTableStatements } from './table.js';

/** The statements of a grant set on a function's own role (infra/grants.ts, the first table). */
export function grantStatements(
  grants: readonly Grant[],
  targets: RoleTargets,
  settings: Settings,
  /** The route's own global items (lib/routes.ts OWN_PARTITIONS): its only table statements; unconditioned without. */
  own?: OwnItems,
  /** An operator write route's partitions (lib/routes.ts OPERATOR_WRITES). */
  operatorWrites?: readonly string[],
): { statements: iam.PolicyStatement[]; acknowledgments: Acknowledgment[] } {
  const statements: iam.PolicyStatement[] = [
    new iam.PolicyStatement({ sid: 'Logs', actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [logGroupArnPattern(settings.name)] }),
    ...ownTableStatements(grants, targets.table.tableArn, own, operatorWrites),
    ...keyDescribeStatements(grants, targets.key),
    ...dataKeyStatements(grants, targets.key, false),
    ...webhookQueueSend(grants, targets),
    ...documentStatements(grants, documentsBucketArn(settings.name), 'tenants/*', targets.key, ''),
    ...auditQueueSend(grants, targets),
    ...jobsQueueSend(grants, targets),
    ...platformStatements(grants, settings),
    ...kmsSigningStatements(grants),
  ];
  return { statements, acknowledgments: ownAcknowledgments(grants, settings) };
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
  own?: OwnItems,
  operatorWrites?: readonly string[],
): iam.Role {
  const role = lambdaRole(scope, id, description);
  const { statements, acknowledgments } = grantStatements(grants, targets, settings, own, operatorWrites);
  role.attachInlinePolicy(new iam.Policy(role, 'Grants', { statements: [...statements, ...extra] }));
  acknowledge(role, acknowledgments);
  return role;
}

/** A role Lambda assumes (a function's execution role). */
export const lambdaRole = (scope: Construct, id: string, description: string): iam.Role =>
  new iam.Role(scope, id, { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'), description });

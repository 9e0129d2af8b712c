import * as iam from 'aws-cdk-lib/aws-iam';
import type { Grant } from '../../lib/routes.js';
import { hsmConfigured, type Settings } from '../settings.js';
import type { Acknowledgment } from './common.js';
import { documentsAcknowledgment, usesDocuments } from './documents.js';
import { usesKmsSigning } from './kms.js';

const hsmNetwork = (grants: readonly Grant[], settings: Settings) => grants.includes('hsm') && hsmConfigured(settings.hsm);
const hsmCluster = (grants: readonly Grant[], settings: Settings) => (grants.includes('hsm') || grants.includes('hsm:describe')) && hsmConfigured(settings.hsm);

/**
 * `hsm`, `hsm:describe` and `payment`: the network interfaces Lambda needs in the CloudHSM VPC,
 * the cluster's HSM addresses (signing) or state (describing) (lib/signing/cloudhsm.ts), the
 * PIN secret, and the payment provider's secret (each only when the context configures it).
 */
export function platformStatements(grants: readonly Grant[], settings: Settings): iam.PolicyStatement[] {
  const statements: iam.PolicyStatement[] = [];
  if (hsmNetwork(grants, settings)) {
    const eni = ['CreateNetworkInterface', 'DescribeNetworkInterfaces', 'DescribeSubnets', 'DeleteNetworkInterface', 'AssignPrivateIpAddresses', 'UnassignPrivateIpAddresses'];
    statements.push(new iam.PolicyStatement({ sid: 'VpcNetworkInterfaces', actions: eni.map((a) => `ec2:${a}`), resources: ['*'] }));
  }
  if (hsmCluster(grants, settings)) statements.push(new iam.PolicyStatement({ sid: 'HsmCluster', actions: ['cloudhsm:DescribeClusters'], resources: ['*'] }));
  if (grants.includes('hsm') && settings.hsm.pinSecretArn) {
    statements.push(new iam.PolicyStatement({ sid: 'HsmPin', actions: ['secretsmanager:GetSecretValue'], resources: [settings.hsm.pinSecretArn] }));
  }
  if (grants.includes('payment') && settings.paymentSecretArn) {
    statements.push(new iam.PolicyStatement({ sid: 'PaymentSecret', actions: ['secretsmanager:GetSecretValue'], resources: [settings.paymentSecretArn] }));
  }
  return statements;
}

/** Why a role holds Resource "*": X-Ray always; the ENI actions, DescribeClusters and CreateKey where they are granted. */
function wildcardReason(grants: readonly Grant[], settings: Settings): string {
  let reason = hsmNetwork(grants, settings)
    ? 'Resource "*" is required by AWS for X-Ray PutTraceSegments/PutTelemetryRecords and for the EC2 network-interface actions Lambda performs to place a function in the CloudHSM VPC (the same actions as AWSLambdaVPCAccessExecutionRole); only the signing role has the latter.'
    : 'X-Ray PutTraceSegments/PutTelemetryRecords do not support resource-level permissions; AWS requires Resource "*".';
  if (hsmCluster(grants, settings)) {
    reason = `${reason} cloudhsm:DescribeClusters (the cluster's HSM addresses and state) supports no resource-level permissions, so AWS requires Resource "*" too.`;
  }
  if (usesKmsSigning(grants)) {
    reason = `${reason} kms:CreateKey/TagResource name no key yet, so AWS requires Resource "*" too (conditioned on SIGN_VERIFY keys with a tenant_id tag).`;
  }
  return reason;
}

/** The cdk-nag acknowledgments a function's own role needs for its unavoidable wildcards (infra/nag.ts). */
export function ownAcknowledgments(grants: readonly Grant[], settings: Settings): Acknowledgment[] {
  const acknowledgments: Acknowledgment[] = [
    {
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:/aws/lambda/${settings.name}-*:*]`,
      reason: 'A role is shared by every function with the same grants, and its functions write their logs to groups named /aws/lambda/<name>-<route>: the pattern lets them write log streams in any log group of this deployment (and of another deployment whose name starts with "<name>-"), not only their own; it grants no read. Naming each group would grow with every route of the role. The logger logs metadata only, never a body, header value or secret (lib/core/logger.ts; the suite\'s leak scan searches every log line for canary values).',
    },
    { id: 'AwsSolutions-IAM5[Resource::*]', reason: wildcardReason(grants, settings) },
  ];
  if (usesDocuments(grants)) acknowledgments.push(documentsAcknowledgment(settings.name, false));
  if (usesKmsSigning(grants)) {
    acknowledgments.push({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:kms:<AWS::Region>:<AWS::AccountId>:key/*]`,
      reason: 'Tenants\' KMS signing keys are created at run time; the statement is bounded by the tenant_id tag condition, so only keys this service created can be used.',
    });
  }
  return acknowledgments;
}

import { Aws } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Grant } from '../../lib/routes.js';
import type { RoleTargets } from './common.js';

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

/** `queue:send` (the webhook queue). */
export const webhookQueueSend = (grants: readonly Grant[], t: RoleTargets) => (grants.includes('queue:send') ? queueSend('QueueSend', 'QueueKey', t.queue, t.key) : []);
/** `audit:send`: a read-only route's audit entries (lib/audit/queue.ts), SendMessage only, on the audit queue only. */
export const auditQueueSend = (grants: readonly Grant[], t: RoleTargets) => (grants.includes('audit:send') ? queueSend('AuditSend', 'AuditQueueKey', t.auditQueue, t.key) : []);
/** `jobs:send` (the tool jobs queue). */
export const jobsQueueSend = (grants: readonly Grant[], t: RoleTargets) => (grants.includes('jobs:send') ? queueSend('JobsSend', 'JobsKey', t.jobsQueue, t.key) : []);

/** The audit writer's consumption of the audit queue, and that queue's data key only via SQS. */
export function auditQueueConsume(t: Pick<RoleTargets, 'auditQueue' | 'key'>): iam.PolicyStatement[] {
  return [
    new iam.PolicyStatement({
      sid: 'AuditQueueConsume',
      actions: ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'],
      resources: [t.auditQueue.queueArn],
    }),
    new iam.PolicyStatement({
      sid: 'AuditQueueKey',
      actions: ['kms:Decrypt'],
      resources: [t.key.keyArn],
      conditions: {
        StringEquals: {
          'kms:ViaService': `sqs.${Aws.REGION}.${Aws.URL_SUFFIX}`,
          'kms:EncryptionContext:aws:sqs:arn': t.auditQueue.queueArn,
        },
      },
    }),
  ];
}

import { Duration, NestedStack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { AUDIT_QUEUE } from '../lib/audit/queue.js';
import { OUTBOX_STREAM } from '../lib/events/relay.js';
import type { Grant } from '../lib/routes.js';
import { alarmActions } from './alarms.js';
import { CodeAssets } from './code.js';
import { auditWriterRoles, grantedRole, platformListingWrite, type RoleTargets, workerRoles } from './grants.js';
import type { PlatformListing } from '../lib/store/keys.js';
import { ServiceFunction } from './route-function.js';
import type { Settings } from './settings.js';

/**
 * Functions that are not routes, each written next to its capability and wired here: the
 * outbox relay (the table's stream, filtered to outbox and audit inserts), the webhook delivery worker (the webhook queue's consumer), the
 * audit writer (the audit queue's consumer), the jobs worker and the sweepers (schedules). Their grants use the route table's vocabulary, plus the
 * queue permissions a consumer needs. Their modules are bundled with the routes' (infra/bundle.ts),
 * each into its own code asset.
 */
export interface BackgroundJob {
  /** Construct id and function-name suffix (`<name>-job-<slug>`). */
  readonly id: string;
  readonly slug: string;
  /** `<module>.<export>` under functions/, like the route table's handler column. */
  readonly handler: string;
  readonly description: string;
  readonly grants: readonly Grant[];
  readonly timeout: Duration;
  readonly trigger: { readonly schedule: string } | { readonly queue: 'webhook' | 'jobs' | 'audit' } | { readonly stream: 'table' };
  /** The queue URLs in its environment. */
  readonly queueEnv: boolean;
  /**
   * `audit`: the audit writer. No table grant on its own role: it works in each entry's
   * tenant scope through a tenant-access role allowed only the PutItem of an audit entry
   * (infra/grants.ts auditWriterRoles; TENANT_ROLE_ARN in its environment).
   * `grants`: a worker that acts for one account per message or listing entry: its table,
   * envelope-key and document grants are on a tenant-access role, conditioned on the session's
   * account as a tenant route's are, and it enters the account's scope (lib/tenancy/scope.ts
   * `withTenant`) for everything it does there (infra/grants.ts workerRoles).
   */
  readonly tenantAccess?: 'audit' | 'grants';
  /**
   * With `tenantAccess: 'grants'`: the platform listings (lib/store/keys.ts PLATFORM_LISTINGS)
   * the execution role reads on index plat, to find the accounts it works for.
   */
  readonly platformListings?: readonly PlatformListing[];
  /**
   * With `tenantAccess: 'grants'`: its own role also writes the platform listings' keys, and
   * nothing else, on account items (infra/grants/table.ts `platformListingWrite`): the stream
   * relay, which lists leases and audit entries no tenant session may list (issue 31;
   * docs/architecture.md, "Roles that are not tenant-scoped").
   */
  readonly platformListingWrites?: boolean;
}

/** The webhook worker's timeout; the queue's visibility timeout is 6 times it (SQS's rule for Lambda consumers). */
export const WEBHOOK_WORKER_TIMEOUT = Duration.seconds(30);
/** The jobs worker's timeout (one database extraction job per message); the jobs queue's visibility timeout is 6 times it. */
export const JOBS_WORKER_TIMEOUT = Duration.minutes(5);

export const BACKGROUND_JOBS: readonly BackgroundJob[] = [
  {
    id: 'OutboxRelay',
    slug: 'outbox-relay',
    handler: 'webhooks/relay.handler',
    description: 'outbox relay: the table stream (outbox and audit inserts) -> webhook queue, audit sealing',
    grants: ['table:read', 'table:write', 'kms:encrypt', 'queue:send'],
    timeout: Duration.seconds(60),
    trigger: { stream: 'table' },
    queueEnv: true,
    // each record names its account (lib/events/relay.ts): the outbox item's read and delete,
    // the delivery record, the audit chain, the audit signing key and its data key run in that
    // account's session; its own role sends the messages and writes the listings' keys
    tenantAccess: 'grants',
    platformListingWrites: true,
  },
  {
    id: 'WebhookWorker',
    slug: 'webhook-worker',
    handler: 'webhooks/worker.handler',
    description: 'webhook delivery worker: consumes the webhook queue',
    grants: ['table:read', 'table:write', 'kms:decrypt'],
    timeout: WEBHOOK_WORKER_TIMEOUT,
    trigger: { queue: 'webhook' },
    queueEnv: true,
    // each message names its account (lib/events/delivery.ts): the delivery runs in its session
    tenantAccess: 'grants',
  },
  {
    id: 'JobsWorker',
    slug: 'jobs-worker',
    handler: 'tools/extraction-worker.handler',
    description: 'tool jobs worker: consumes the jobs queue (database extraction jobs)',
    grants: ['table:read', 'table:write', 'kms:encrypt'],
    timeout: JOBS_WORKER_TIMEOUT,
    trigger: { queue: 'jobs' },
    queueEnv: false,
    // each message names its account (lib/tools/extraction.ts runExtractionJob): the job runs in its session
    tenantAccess: 'grants',
  },
  {
    id: 'AuditWriter',
    slug: 'audit-writer',
    handler: 'audit/writer.handler',
    description: 'audit writer: consumes the audit queue (the read-only routes\' audit entries) and writes each entry in its account',
    grants: [],
    timeout: Duration.seconds(AUDIT_QUEUE.writerTimeoutSeconds),
    trigger: { queue: 'audit' },
    queueEnv: false,
    tenantAccess: 'audit',
  },
  {
    id: 'LeaseSweeper',
    slug: 'lease-sweeper',
    handler: 'database/sweeper.sweep',
    description: 'database lease sweeper: revokes leases past their expiry (every minute)',
    grants: ['table:read', 'table:write', 'kms:decrypt'],
    timeout: Duration.seconds(60),
    trigger: { schedule: 'rate(1 minute)' },
    queueEnv: false,
    // the LEASES listing names each due lease's account (lib/database/sweeper.ts): its revocation runs in that session
    tenantAccess: 'grants',
    platformListings: ['LEASES'],
  },
  {
    id: 'CertificateExpirySweeper',
    slug: 'cert-expiry',
    handler: 'certificates/expiry.sweep',
    description: 'certificate expiry sweeper: emits certificate.expiring at 30, 7 and 1 days (hourly)',
    grants: ['table:read', 'table:write'],
    timeout: Duration.minutes(5),
    trigger: { schedule: 'rate(1 hour)' },
    queueEnv: false,
    // the TENANTS listing names the accounts (functions/certificates/expiry.ts): each account's sweep runs in its session
    tenantAccess: 'grants',
    platformListings: ['TENANTS'],
  },
];

export class BackgroundStack extends NestedStack {
  readonly functions = new Map<string, lambda.Function>();

  constructor(
    scope: Construct,
    id: string,
    props: {
      jobs: readonly BackgroundJob[];
      targets: RoleTargets;
      /** The stream mapping's on-failure destination (infra/data-stack.ts). */
      streamFailureQueue: sqs.IQueue;
      settings: Settings;
      assetDir: string;
      environment: Readonly<Record<string, string>>;
    },
  ) {
    super(scope, id, { description: 'secrets API background functions (not routes)' });
    const { settings, targets: t } = props;
    const codes = new CodeAssets(props.assetDir);
    for (const job of props.jobs) {
      const consumed =
        'queue' in job.trigger
          ? { jobs: [t.jobsQueue, t.jobsDeadLetterQueue], audit: [t.auditQueue, t.auditDeadLetterQueue], webhook: [t.queue, t.deadLetterQueue] }[job.trigger.queue]
          : undefined;
      const streamRead = new iam.PolicyStatement({
        sid: 'TableStreamRead',
        actions: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:ListStreams'],
        resources: [t.table.tableStreamArn ?? fail('the table has no stream (infra/data-stack.ts)')],
      });
      // Lambda sends a stream batch's on-failure record with the function's role: SendMessage to
      // that queue, and its key only through SQS for that queue.
      const streamFailure = [
        new iam.PolicyStatement({ sid: 'StreamFailureSend', actions: ['sqs:SendMessage'], resources: [props.streamFailureQueue.queueArn] }),
        new iam.PolicyStatement({
          sid: 'StreamFailureKey',
          actions: ['kms:GenerateDataKey', 'kms:Decrypt'],
          resources: [t.key.keyArn],
          conditions: {
            StringEquals: {
              'kms:ViaService': `sqs.${this.region}.${this.urlSuffix}`,
              'kms:EncryptionContext:aws:sqs:arn': props.streamFailureQueue.queueArn,
            },
          },
        }),
      ];
      const extra = 'stream' in job.trigger
        ? [streamRead, ...streamFailure]
        : consumed
        ? [
            new iam.PolicyStatement({
              sid: 'QueueConsume',
              actions: ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:ChangeMessageVisibility', 'sqs:GetQueueAttributes'],
              resources: [consumed[0]!.queueArn],
            }),
            new iam.PolicyStatement({ sid: 'DeadLetterSend', actions: ['sqs:SendMessage'], resources: [consumed[1]!.queueArn] }),
            new iam.PolicyStatement({
              sid: 'QueueKeys',
              actions: ['kms:Decrypt', 'kms:GenerateDataKey'],
              resources: [t.key.keyArn],
              conditions: {
                StringEquals: { 'kms:ViaService': `sqs.${this.region}.${this.urlSuffix}` },
                'ForAnyValue:StringEquals': { 'kms:EncryptionContext:aws:sqs:arn': consumed.map((q) => q.queueArn) },
              },
            }),
          ]
        : [];
      // the audit writer: its queue statements and tenant-access role are auditWriterRoles' own
      const description = `${settings.name} ${job.description}`;
      const writer =
        job.tenantAccess === 'audit'
          ? auditWriterRoles(this, `${job.id}Role`, description, t, settings)
          : job.tenantAccess === 'grants'
          ? workerRoles(this, `${job.id}Role`, description, job.grants, t, settings, [...extra, ...(job.platformListingWrites ? [platformListingWrite(t.table.tableArn)] : [])], job.platformListings ?? [])
          : undefined;
      const role = writer?.execution ?? grantedRole(this, `${job.id}Role`, description, job.grants, t, settings, extra);
      const fn = new ServiceFunction(this, job.id, {
        functionName: `${settings.name}-job-${job.slug}`,
        description: job.description,
        handler: job.handler,
        role,
        code: codes.forHandler(job.handler),
        settings,
        timeout: job.timeout,
        environment: {
          ...props.environment,
          ...(job.queueEnv ? { WEBHOOK_QUEUE_URL: t.queue.queueUrl, WEBHOOK_DLQ_URL: t.deadLetterQueue.queueUrl } : {}),
          ...(writer ? { TENANT_ROLE_ARN: writer.tenant.roleArn } : {}),
        },
      }).function;
      if ('schedule' in job.trigger) {
        new events.Rule(this, `${job.id}Schedule`, {
          description: `${settings.name}: ${job.description}`,
          schedule: events.Schedule.expression(job.trigger.schedule),
          targets: [new targets.LambdaFunction(fn, { retryAttempts: 0 })],
        });
      } else if ('stream' in job.trigger) {
        // One invocation per shard at a time (no overlapping relays); a failed record is
        // retried from its sequence number (ReportBatchItemFailures), bisected on errors; a
        // batch still failing after the retries is recorded in the failure queue, never dropped.
        // (Set on the L1: the L2's onFailure would also grant the role an unconditioned
        // kms:Encrypt on the key; the two statements above are the exact need.)
        const mapping = new lambda.EventSourceMapping(this, `${job.id}Source`, {
          target: fn,
          eventSourceArn: t.table.tableStreamArn,
          startingPosition: lambda.StartingPosition.TRIM_HORIZON,
          batchSize: OUTBOX_STREAM.batchSize,
          maxBatchingWindow: Duration.seconds(OUTBOX_STREAM.maxBatchingWindowSeconds),
          parallelizationFactor: OUTBOX_STREAM.parallelizationFactor,
          retryAttempts: OUTBOX_STREAM.retryAttempts,
          bisectBatchOnError: true,
          reportBatchItemFailures: true,
          filters: OUTBOX_STREAM.filters.map((pattern) => lambda.FilterCriteria.filter(pattern as Record<string, unknown>)),
        });
        (mapping.node.defaultChild as lambda.CfnEventSourceMapping).destinationConfig = {
          onFailure: { destination: props.streamFailureQueue.queueArn },
        };
      } else {
        // The mapping itself, not SqsEventSource: that one would also grant an unconditioned
        // kms:Decrypt on the key (the queue's), which the statements above grant only via SQS.
        new lambda.EventSourceMapping(this, `${job.id}Source`, {
          target: fn,
          eventSourceArn: consumed![0]!.queueArn,
          batchSize: job.tenantAccess === 'audit' ? AUDIT_QUEUE.batchSize : 10,
          reportBatchItemFailures: true,
        });
      }
      new cloudwatch.Alarm(this, `${job.id}Errors`, {
        alarmDescription: `${job.description}: failed invocations for 15 minutes.`,
        metric: fn.metricErrors({ period: Duration.minutes(5), statistic: 'Sum' }),
        threshold: 1,
        evaluationPeriods: 3,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }).addAlarmAction(...alarmActions(this, settings));
      this.functions.set(job.id, fn);
    }
  }
}

function fail(message: string): never {
  throw new Error(message);
}

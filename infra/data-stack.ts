import { Annotations, CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { TABLE_DEFINITION, TABLE_KEYS } from '../lib/store/keys.js';
import { alarmActions, alarmTopic } from './alarms.js';
import { acknowledge } from './nag.js';
import { documentsBucketName } from './naming.js';
import { AUDIT_QUEUE } from '../lib/audit/queue.js';
import { JOBS_WORKER_TIMEOUT, WEBHOOK_WORKER_TIMEOUT } from './background.js';
import type { Settings } from './settings.js';

/**
 * The stateful resources, in their own stack so the API stack can be replaced or deleted
 * without touching data: the single table, the envelope key, the webhook, jobs and audit
 * queues and the protected documents' bucket. All are retained when the stack is deleted; the
 * table also has deletion protection.
 */
export class DataStack extends Stack {
  readonly table: dynamodb.Table;
  /** The envelope-encryption key (tenant data keys are generated under it) and the queues' key. */
  readonly key: kms.Key;
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  /** Protected documents (lib/documents/storage.ts): each object a PDF already sealed with its tenant's data key. */
  readonly documents: s3.Bucket;
  /** Asynchronous tool jobs (database extraction): POST /extraction/db sends, the jobs worker consumes. */
  readonly jobsQueue: sqs.Queue;
  readonly jobsDeadLetterQueue: sqs.Queue;
  /** The read-only routes' audit entries (lib/audit/queue.ts): they send, the audit writer writes. */
  readonly auditQueue: sqs.Queue;
  readonly auditDeadLetterQueue: sqs.Queue;
  /**
   * The outbox stream mapping's on-failure destination (infra/background.ts): a batch the relay
   * still fails after its retries is recorded here (shard and sequence numbers, no record
   * contents) instead of being dropped, so its events can be replayed from the stream.
   */
  readonly streamFailureQueue: sqs.Queue;
  /** The deployment's own alarm topic; undefined when context alarmTopicArn names one. */
  readonly alarmTopic?: sns.Topic;

  constructor(scope: Construct, id: string, props: StackProps & { settings: Settings }) {
    super(scope, id, props);
    const { settings } = props;

    this.alarmTopic = alarmTopic(this, settings);
    if (this.alarmTopic && !settings.alarmEmail) {
      Annotations.of(this).addWarningV2(
        'secrets-api:alarm-subscriber',
        `every alarm notifies the SNS topic ${settings.name}-alarms, which has no subscriber: set context alarmEmail=<address>, or subscribe to it (output AlarmTopicArn), or set alarmTopicArn to a topic of your own`,
      );
    }

    this.key = new kms.Key(this, 'EnvelopeKey', {
      description: `${settings.name}: wraps tenant data keys (encryption context tenant_id) and encrypts the webhook queues`,
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.key.addAlias(`alias/${settings.name}`);

    // The key design of lib/store/keys.ts: the local runtime creates the same table from it.
    const attr = (name: string): dynamodb.Attribute => {
      const def = TABLE_DEFINITION.attributeDefinitions.find((a) => a.AttributeName === name);
      if (!def) throw new Error(`TABLE_DEFINITION has no attribute ${name}`);
      return { name, type: def.AttributeType === 'S' ? dynamodb.AttributeType.STRING : dynamodb.AttributeType.NUMBER };
    };
    const keyAttr = (schema: readonly { AttributeName: string; KeyType: string }[], type: 'HASH' | 'RANGE') => {
      const entry = schema.find((k) => k.KeyType === type);
      if (!entry) throw new Error(`TABLE_DEFINITION has no ${type} key`);
      return attr(entry.AttributeName);
    };
    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: keyAttr(TABLE_DEFINITION.keySchema, 'HASH'),
      sortKey: keyAttr(TABLE_DEFINITION.keySchema, 'RANGE'),
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      timeToLiveAttribute: TABLE_KEYS.ttl,
      // the outbox relay and the audit sealer are its consumers (lib/events/relay.ts): no polling
      stream: dynamodb.StreamViewType[TABLE_DEFINITION.streamViewType],
      // Secret values are already sealed with tenant data keys (lib/crypto/envelope.ts); the
      // table itself uses the AWS managed key, so reading the table never needs a KMS grant.
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // gsi1 (account-local: RES#<id>) and plat (the platform listings, lib/store/keys.ts): an
    // existing table gets plat in its own update (CloudFormation adds one GSI per update)
    for (const gsi of [TABLE_DEFINITION.gsi1, TABLE_DEFINITION.plat]) {
      this.table.addGlobalSecondaryIndex({
        indexName: gsi.IndexName,
        partitionKey: keyAttr(gsi.KeySchema, 'HASH'),
        sortKey: keyAttr(gsi.KeySchema, 'RANGE'),
        projectionType: dynamodb.ProjectionType.KEYS_ONLY,
      });
    }

    this.deadLetterQueue = new sqs.Queue(this, 'WebhookDeadLetterQueue', {
      encryption: sqs.QueueEncryption.KMS,
      encryptionMasterKey: this.key,
      dataKeyReuse: Duration.minutes(5),
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.queue = new sqs.Queue(this, 'WebhookQueue', {
      encryption: sqs.QueueEncryption.KMS,
      encryptionMasterKey: this.key,
      dataKeyReuse: Duration.minutes(5),
      enforceSSL: true,
      retentionPeriod: Duration.days(4),
      // SQS's rule for a Lambda consumer: at least 6 times the function's timeout
      visibilityTimeout: Duration.seconds(WEBHOOK_WORKER_TIMEOUT.toSeconds() * 6),
      // above WEBHOOK_MAX_ATTEMPTS (8): the worker dead-letters exhausted deliveries itself;
      // the redrive is the safety net for a worker that keeps failing on a message
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: 10 },
      removalPolicy: RemovalPolicy.RETAIN,
    });

    // Objects are sealed by the service before they arrive (AES-256-GCM, tenant data key, AAD
    // tenant/document/version); the bucket adds SSE-KMS under the envelope key (bucket key:
    // one KMS call per object rather than per request), TLS-only access, no public access,
    // versioning (an overwritten or deleted object stays recoverable for 30 days) and
    // lifecycle rules that expire those noncurrent versions, their delete markers and
    // abandoned multipart uploads.
    this.documents = new s3.Bucket(this, 'DocumentsBucket', {
      bucketName: documentsBucketName(settings.name),
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      encryption: s3.BucketEncryption.KMS,
      encryptionKey: this.key,
      bucketKeyEnabled: true,
      versioned: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [
        {
          id: 'expire-noncurrent-and-deleted',
          noncurrentVersionExpiration: Duration.days(30),
          expiredObjectDeleteMarker: true,
          abortIncompleteMultipartUploadAfter: Duration.days(1),
        },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    acknowledge(this.documents, [
      {
        id: 'AwsSolutions-S1',
        reason:
          'No S3 server access logs: accesses made through the service (uploads, downloads, page views) are entries of the application audit chain naming the principal, and the objects are sealed with their tenant\'s data key, so a raw read yields ciphertext. Direct accesses by other IAM principals of the account (administrators) are NOT logged by this stack: enable CloudTrail S3 data events on the bucket for object-level logs of those.',
      },
    ]);
    this.jobsDeadLetterQueue = new sqs.Queue(this, 'JobsDeadLetterQueue', {
      encryption: sqs.QueueEncryption.KMS,
      encryptionMasterKey: this.key,
      dataKeyReuse: Duration.minutes(5),
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.jobsQueue = new sqs.Queue(this, 'JobsQueue', {
      encryption: sqs.QueueEncryption.KMS,
      encryptionMasterKey: this.key,
      dataKeyReuse: Duration.minutes(5),
      enforceSSL: true,
      retentionPeriod: Duration.days(1),
      visibilityTimeout: Duration.seconds(JOBS_WORKER_TIMEOUT.toSeconds() * 6),
      // a job records its own failure; the redrive parks a message whose worker keeps crashing
      deadLetterQueue: { queue: this.jobsDeadLetterQueue, maxReceiveCount: 3 },
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.auditDeadLetterQueue = new sqs.Queue(this, 'AuditDeadLetterQueue', {
      encryption: sqs.QueueEncryption.KMS,
      encryptionMasterKey: this.key,
      dataKeyReuse: Duration.minutes(5),
      enforceSSL: true,
      retentionPeriod: Duration.days(AUDIT_QUEUE.deadLetterRetentionDays),
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.auditQueue = new sqs.Queue(this, 'AuditQueue', {
      encryption: sqs.QueueEncryption.KMS,
      encryptionMasterKey: this.key,
      dataKeyReuse: Duration.minutes(5),
      enforceSSL: true,
      retentionPeriod: Duration.days(AUDIT_QUEUE.retentionDays),
      visibilityTimeout: Duration.seconds(AUDIT_QUEUE.visibilityTimeoutSeconds),
      // a message the writer refuses (not an audit entry) or keeps failing on is parked here
      deadLetterQueue: { queue: this.auditDeadLetterQueue, maxReceiveCount: AUDIT_QUEUE.maxReceiveCount },
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.streamFailureQueue = new sqs.Queue(this, 'StreamFailureQueue', {
      encryption: sqs.QueueEncryption.KMS,
      encryptionMasterKey: this.key,
      dataKeyReuse: Duration.minutes(5),
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy: RemovalPolicy.RETAIN,
    });
    acknowledge(this.streamFailureQueue, [
      {
        id: 'AwsSolutions-SQS3',
        reason: 'This queue IS a dead-letter destination: the outbox stream mapping\'s on-failure records (shard, sequence numbers) land here; nothing consumes it automatically.',
      },
    ]);

    // Read by `npm run operator:create -- --stack <this stack>` (scripts/operator/create.ts),
    // which creates the first platform operator in the table with the deployer's credentials.
    new CfnOutput(this, 'TableName', { value: this.table.tableName, description: 'The single DynamoDB table' });
    new CfnOutput(this, 'EnvelopeKeyArn', { value: this.key.keyArn, description: 'KMS key that wraps tenant data keys' });
    if (this.alarmTopic) new CfnOutput(this, 'AlarmTopicArn', { value: this.alarmTopic.topicArn, description: 'SNS topic every alarm notifies: subscribe to it' });

    // "at least one in the window" alarms: a parked message, a throttled or failed table request
    const anyAlarm = (id: string, description: string, metric: cloudwatch.IMetric, evaluationPeriods = 1) =>
      new cloudwatch.Alarm(this, id, {
        alarmDescription: description,
        metric,
        threshold: 1,
        evaluationPeriods,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }).addAlarmAction(...alarmActions(this, settings));
    const depth = (queue: sqs.IQueue) => queue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: 'Maximum' });
    anyAlarm('WebhookDeadLetterDepth', 'Webhook deliveries parked in the dead-letter queue (see README, webhooks).', depth(this.deadLetterQueue));
    // an audit entry in the dead-letter queue is an entry missing from the trail until redriven
    anyAlarm(
      'AuditDeadLetterDepth',
      'Audit entries parked in the audit dead-letter queue: not in the audit trail until redriven (docs/operations.md, Audit).',
      depth(this.auditDeadLetterQueue),
    );
    anyAlarm('JobsDeadLetterDepth', 'Tool jobs whose worker kept crashing are parked in the jobs dead-letter queue (docs/operations.md).', depth(this.jobsDeadLetterQueue));
    anyAlarm(
      'StreamFailureDepth',
      'The outbox relay failed a stream batch after all retries: its events (webhooks, audit seals) were not delivered; replay them from the shard and sequence numbers in the message within the stream\'s 24 hours (docs/operations.md).',
      depth(this.streamFailureQueue),
    );
    // The table: throttled requests (on-demand tables throttle at their table or account
    // ceiling, or on a hot partition) and DynamoDB's own errors, over the operations the service uses.
    const operations = [
      dynamodb.Operation.GET_ITEM,
      dynamodb.Operation.PUT_ITEM,
      dynamodb.Operation.UPDATE_ITEM,
      dynamodb.Operation.DELETE_ITEM,
      dynamodb.Operation.QUERY,
      dynamodb.Operation.BATCH_GET_ITEM,
      dynamodb.Operation.BATCH_WRITE_ITEM,
      dynamodb.Operation.TRANSACT_GET_ITEMS,
      dynamodb.Operation.TRANSACT_WRITE_ITEMS,
    ];
    const sum = (name: string) => this.table.metric(name, { period: Duration.minutes(5), statistic: 'Sum' });
    anyAlarm(
      'TableThrottles',
      'DynamoDB throttled requests to the table for 10 minutes (table or account throughput ceiling, or a hot partition): callers see 5xx or retries.',
      new cloudwatch.MathExpression({ expression: 'r + w', usingMetrics: { r: sum('ReadThrottleEvents'), w: sum('WriteThrottleEvents') }, period: Duration.minutes(5) }),
      2,
    );
    anyAlarm(
      'TableSystemErrors',
      'DynamoDB answered the table\'s requests with server errors (HTTP 500) for 10 minutes.',
      this.table.metricSystemErrorsForOperations({ operations, period: Duration.minutes(5), statistic: 'Sum' }),
      2,
    );
    // entries waiting longer than the writer ever needs: the writer is failing or stalled
    new cloudwatch.Alarm(this, 'AuditQueueAge', {
      alarmDescription: 'The oldest audit entry in the audit queue waited more than 5 minutes: the audit writer is failing or stalled (docs/operations.md, Audit).',
      metric: this.auditQueue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(5), statistic: 'Maximum' }),
      threshold: 300,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    }).addAlarmAction(...alarmActions(this, settings));
  }
}

import { Arn, Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct } from 'constructs';
import { acknowledge } from './nag.js';
import type { Settings } from './settings.js';

const topics = new WeakMap<Construct, sns.ITopic>();

/** The name of the topic the data stack creates when context `alarmTopicArn` is not set. */
export function defaultAlarmTopicName(settings: Settings): string {
  return `${settings.name}-alarms`;
}

/**
 * Where every alarm goes: context `alarmTopicArn` when set, else the deployment's own topic
 * `<name>-alarms` (created by the data stack, which every other stack deploys after, so its
 * ARN is known without a cross-stack reference). No alarm is ever without an action.
 */
export function alarmActions(scope: Construct, settings: Settings): cloudwatch.IAlarmAction[] {
  let topic = topics.get(scope);
  if (!topic) {
    const arn =
      settings.alarmTopicArn ??
      Arn.format({ service: 'sns', resource: defaultAlarmTopicName(settings) }, Stack.of(scope));
    topic = sns.Topic.fromTopicArn(scope, 'AlarmTopic', arn);
    topics.set(scope, topic);
  }
  return [new actions.SnsAction(topic)];
}

/**
 * The deployment's alarm topic (data stack), unless context `alarmTopicArn` names one: TLS-only
 * publishing, and an e-mail subscription when context `alarmEmail` is set (AWS sends the
 * address a confirmation link). Without either, synthesis warns: the topic exists and every
 * alarm notifies it, but nobody is subscribed yet.
 */
export function alarmTopic(scope: Construct, settings: Settings): sns.Topic | undefined {
  if (settings.alarmTopicArn) return undefined;
  const topic = new sns.Topic(scope, 'AlarmTopic', {
    topicName: defaultAlarmTopicName(settings),
    displayName: `${settings.name} alarms`,
    enforceSSL: true,
  });
  acknowledge(topic, [
    {
      id: 'AwsSolutions-SNS2',
      reason:
        'The topic carries alarm state changes only (alarm name, metric, threshold, time): no tenant data and no secret. Encrypting it would need a customer-managed key whose policy admits cloudwatch.amazonaws.com (CloudWatch cannot publish to a topic under the AWS-managed SNS key); set context alarmTopicArn to use an encrypted topic of your own.',
    },
  ]);
  if (settings.alarmEmail) topic.addSubscription(new subscriptions.EmailSubscription(settings.alarmEmail));
  // the data stack's own alarms notify it directly
  topics.set(scope, topic);
  return topic;
}

/** p99 latency over 5 minutes above which a family alarms (ms); families with slow work by nature get more. */
export const LATENCY_P99_MS: Readonly<Record<string, number>> = {
  default: 3_000,
  signing: 5_000,
  certificates: 10_000,
  database: 10_000,
  tools: 15_000,
  documents: 10_000,
};
/** The 5xx share of a family's requests above which it alarms (%). */
export const ERROR_RATE_PERCENT = 5;

/** The service's own metrics (lib/core/metrics.ts): namespace and `service` dimension are the deployment's name. */
export function serviceMetric(settings: Settings, metricName: string, family: string, statistic: string): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: settings.name,
    metricName,
    dimensionsMap: { service: settings.name, family },
    statistic,
    period: Duration.minutes(5),
  });
}

/**
 * Two alarms per route family, on the metrics the request log middleware emits
 * (lib/http/define-handler.ts): p99 latency, and the 5xx rate as metric math
 * (100 · errors / requests) for 15 minutes. Missing data (no traffic) is not breaching.
 */
export function familyAlarms(scope: Construct, settings: Settings, families: readonly string[]): cloudwatch.Alarm[] {
  const actions = alarmActions(scope, settings);
  const alarms: cloudwatch.Alarm[] = [];
  for (const family of families) {
    const id = family.replace(/(^|-)([a-z])/g, (_m, _d, c: string) => c.toUpperCase());
    const p99 = LATENCY_P99_MS[family] ?? LATENCY_P99_MS.default!;
    const latency = new cloudwatch.Alarm(scope, `${id}LatencyP99`, {
      alarmName: `${settings.name}-${family}-latency-p99`,
      alarmDescription: `${family} routes: p99 latency above ${p99} ms for 15 minutes.`,
      metric: serviceMetric(settings, 'latency', family, 'p99'),
      threshold: p99,
      evaluationPeriods: 3,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    const rate = new cloudwatch.Alarm(scope, `${id}ErrorRate`, {
      alarmName: `${settings.name}-${family}-5xx-rate`,
      alarmDescription: `${family} routes: more than ${ERROR_RATE_PERCENT}% of requests answered 5xx for 15 minutes.`,
      metric: new cloudwatch.MathExpression({
        expression: '100 * errors / requests',
        label: `${family} 5xx %`,
        usingMetrics: { errors: serviceMetric(settings, 'errors', family, 'Sum'), requests: serviceMetric(settings, 'requests', family, 'Sum') },
        period: Duration.minutes(5),
      }),
      threshold: ERROR_RATE_PERCENT,
      evaluationPeriods: 3,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    for (const a of [latency, rate]) a.addAlarmAction(...actions);
    alarms.push(latency, rate);
  }
  return alarms;
}

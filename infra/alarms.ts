import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import type { Settings } from './settings.js';

const topics = new WeakMap<Construct, sns.ITopic>();

/** The alarm actions of a stack: notify context `alarmTopicArn` when set, else none. */
export function alarmActions(scope: Construct, settings: Settings): cloudwatch.IAlarmAction[] {
  if (!settings.alarmTopicArn) return [];
  let topic = topics.get(scope);
  if (!topic) {
    topic = sns.Topic.fromTopicArn(scope, 'AlarmTopic', settings.alarmTopicArn);
    topics.set(scope, topic);
  }
  return [new actions.SnsAction(topic)];
}

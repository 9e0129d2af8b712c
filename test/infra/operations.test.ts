import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROUTES, type Route } from '../../lib/routes.js';
import { hsmCeiling } from '../../infra/throttling.js';
import { allOfType, functionsByRoute, hsmLayerStandIn, resourcesOfType, roleStatements, synthesize, type Synthesized } from './synth.js';

/**
 * What an operator relies on when something goes wrong, read from the synthesized templates:
 * every alarm reaches someone, the failure paths that lose data have alarms, the outbox stream
 * never drops a batch, concurrency is reserved only where signing runs (and its method
 * answers 429 before Lambda refuses), and every command docs/deployment.md documents
 * synthesizes. Synthesized over a few families (seconds each), the whole table where a
 * property depends on it.
 */

const FAMILIES = new Set(['signing', 'public', 'tools']);
const SUBSET: Route[] = ROUTES.filter((r) => FAMILIES.has(r.family));
const HSM_ROUTES = SUBSET.filter((r) => (r.grants as readonly string[]).includes('hsm'));

const HSM = {
  hsmClusterId: 'cluster-abcdefghijk',
  hsmVpcId: 'vpc-0ddd4444',
  hsmSubnetIds: 'subnet-0aaa1111,subnet-0bbb2222',
  hsmSecurityGroupId: 'sg-0ccc3333',
  hsmPinSecretArn: 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:hsm-pin-AbCdEf',
};

const alarms = (s: Synthesized) => allOfType(s, 'AWS::CloudWatch::Alarm');

describe('alarms reach someone', () => {
  it('by default: the data stack creates <name>-alarms and every alarm of every template notifies it', () => {
    const s = synthesize({ routes: SUBSET });
    const topics = resourcesOfType(s.data, 'AWS::SNS::Topic');
    expect(topics.map(([, t]) => t.Properties!.TopicName)).toEqual(['secrets-api-alarms']);
    expect(resourcesOfType(s.data, 'AWS::SNS::Subscription')).toHaveLength(0);
    expect(s.data.outputs).toHaveProperty('AlarmTopicArn');
    const all = alarms(s);
    expect(all.length).toBeGreaterThan(10);
    for (const { template, id, resource } of all) {
      const actions = resource.Properties!.AlarmActions as unknown[] | undefined;
      expect(actions, `${template.file} ${id} has no alarm action`).toHaveLength(1);
      // the data stack's own alarms: a Ref to the topic; elsewhere its ARN built in the template
      // (arn:${Partition}:sns:${Region}:${AccountId}:secrets-api-alarms)
      const topicRef = template === s.data ? `{"Ref":"${topics[0]![0]}"}` : ':secrets-api-alarms';
      expect(JSON.stringify(actions), `${template.file} ${id}`).toContain(topicRef);
    }
  });

  it('alarmEmail subscribes the address; alarmTopicArn replaces the topic; both together are refused', () => {
    const email = synthesize({ routes: SUBSET, context: { alarmEmail: 'ops@example.com' } });
    const subs = resourcesOfType(email.data, 'AWS::SNS::Subscription').map(([, r]) => r.Properties);
    expect(subs).toEqual([expect.objectContaining({ Protocol: 'email', Endpoint: 'ops@example.com' })]);

    const topic = 'arn:aws:sns:eu-west-1:111122223333:ops';
    const own = synthesize({ routes: SUBSET, context: { alarmTopicArn: topic } });
    expect(resourcesOfType(own.data, 'AWS::SNS::Topic')).toHaveLength(0);
    for (const { resource } of alarms(own)) expect(resource.Properties!.AlarmActions).toEqual([topic]);

    expect(() => synthesize({ routes: SUBSET, context: { alarmEmail: 'ops@example.com', alarmTopicArn: topic } })).toThrow(/alarmEmail.*alarmTopicArn/);
    expect(() => synthesize({ routes: SUBSET, context: { alarmEmail: 'not an address' } })).toThrow(/alarmEmail/);
  });

  it('the jobs dead-letter queue, the stream failure queue and the table have alarms', () => {
    const s = synthesize({ routes: SUBSET });
    const found = resourcesOfType(s.data, 'AWS::CloudWatch::Alarm');
    const byId = new Map(found.map(([id, r]) => [id.replace(/[0-9A-F]{8}$/, ''), r.Properties!]));
    const queueOf = (props: Record<string, any>) => props.Dimensions?.[0]?.Value?.['Fn::GetAtt']?.[0];
    expect(String(queueOf(byId.get('JobsDeadLetterDepth')!))).toMatch(/^JobsDeadLetterQueue/);
    expect(String(queueOf(byId.get('StreamFailureDepth')!))).toMatch(/^StreamFailureQueue/);
    const throttles = byId.get('TableThrottles')!;
    const metricNames = (throttles.Metrics as { MetricStat?: { Metric: { MetricName: string; Namespace: string } } }[])
      .flatMap((m) => (m.MetricStat ? [`${m.MetricStat.Metric.Namespace}/${m.MetricStat.Metric.MetricName}`] : []));
    expect(metricNames.sort()).toEqual(['AWS/DynamoDB/ReadThrottleEvents', 'AWS/DynamoDB/WriteThrottleEvents']);
    const errors = JSON.stringify(byId.get('TableSystemErrors'));
    for (const op of ['GetItem', 'PutItem', 'UpdateItem', 'Query', 'TransactWriteItems']) expect(errors).toContain(`"${op}"`);
  });
});

describe('the outbox stream never drops a batch', () => {
  it('its mapping names the failure queue as on-failure destination, and the relay role may send there (through SQS only for the key)', () => {
    const s = synthesize({ routes: SUBSET });
    const mappings = resourcesOfType(s.background, 'AWS::Lambda::EventSourceMapping').filter(([, m]) => m.Properties!.StartingPosition);
    expect(mappings).toHaveLength(1);
    const [, mapping] = mappings[0]!;
    const destination = mapping.Properties!.DestinationConfig?.OnFailure?.Destination;
    expect(destination, 'the stream mapping has no on-failure destination').toBeDefined();
    // the data stack's StreamFailureQueue ARN (an export of the data stack)
    expect(JSON.stringify(destination)).toMatch(/StreamFailureQueue.*Arn/);
    const relayRole = mapping.Properties!.FunctionName.Ref as string;
    const fn = s.background.resources[relayRole]!;
    const roleId = fn.Properties!.Role['Fn::GetAtt'][0] as string;
    const statements = roleStatements(s).filter((x) => x.template === s.background && x.roles.includes(roleId)).map((x) => x.statement);
    const send = statements.find((st) => st.Sid === 'StreamFailureSend');
    expect(send?.Action).toBe('sqs:SendMessage');
    const key = statements.find((st) => st.Sid === 'StreamFailureKey');
    expect(JSON.stringify(key?.Condition)).toContain('kms:ViaService');
    expect(JSON.stringify(key?.Condition)).toContain('kms:EncryptionContext:aws:sqs:arn');
  });
});

describe('concurrency is reserved only where signing runs', () => {
  it('without the HSM context no function reserves concurrency, and signing methods keep the group limit', () => {
    const s = synthesize({ routes: SUBSET });
    const reserved = allOfType(s, 'AWS::Lambda::Function').filter((f) => f.resource.Properties!.ReservedConcurrentExecutions !== undefined);
    expect(reserved.map((f) => f.resource.Properties!.Description)).toEqual([]);
  });

  it('with it, each signing function reserves its share and its method throttles at or below what the share serves', () => {
    const s = synthesize({ routes: SUBSET, context: { ...HSM, hsmLayerPath: hsmLayerStandIn(), hsmConnectionBudget: '300' } });
    const fns = functionsByRoute(s);
    const stage = resourcesOfType(s.api, 'AWS::ApiGateway::Stage')[0]![1];
    const settings = stage.Properties!.MethodSettings as { ResourcePath: string; HttpMethod: string; ThrottlingRateLimit: number; ThrottlingBurstLimit: number }[];
    expect(HSM_ROUTES.length).toBeGreaterThan(0);
    for (const route of HSM_ROUTES) {
      const reserved = fns.get(route.key)!.resource.Properties!.ReservedConcurrentExecutions as number;
      expect(reserved, route.key).toBeGreaterThanOrEqual(1);
      const entry = settings.find((m) => m.HttpMethod === route.method && m.ResourcePath === `/${route.path.replaceAll('/', '~1')}`);
      expect(entry, `${route.key} has no method setting`).toBeDefined();
      expect(entry!.ThrottlingBurstLimit, route.key).toBeLessThanOrEqual(reserved);
      expect(entry!.ThrottlingRateLimit, route.key).toBeLessThanOrEqual(hsmCeiling(reserved).rate);
    }
  });
});

describe('context guards name what is missing', () => {
  it('requireHsm without the PIN secret is refused, naming hsmPinSecretArn', () => {
    const { hsmPinSecretArn: _, ...withoutPin } = HSM;
    expect(() => synthesize({ routes: SUBSET, context: { ...withoutPin, hsmLayerPath: hsmLayerStandIn(), requireHsm: 'true' } })).toThrow(
      /requireHsm: .*missing: -c hsmPinSecretArn=… \(/,
    );
  });
});

describe('every command docs/deployment.md documents synthesizes', () => {
  const doc = readFileSync(join(import.meta.dirname, '../../docs/deployment.md'), 'utf8');
  const block = /## Variants[\s\S]*?```sh\n([\s\S]*?)```/.exec(doc)?.[1] ?? '';
  const commands = block
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((l) => l.replace(/#.*$/, '').trim())
    .filter((l) => l.startsWith('npx cdk deploy'));

  it('finds the documented commands', () => {
    expect(commands.length).toBeGreaterThanOrEqual(6);
  });

  for (const command of commands) {
    it(command, () => {
      const context: Record<string, string> = {};
      for (const m of command.matchAll(/-c (\w+)=(\S+)/g)) context[m[1]!] = m[2]!;
      // the documented layer is a file the operator builds (docs/deployment.md, CloudHSM)
      if (context.hsmLayerPath) context.hsmLayerPath = hsmLayerStandIn();
      const s = synthesize({ routes: SUBSET, context });
      expect(s.templates.length).toBeGreaterThan(3);
    });
  }
});
